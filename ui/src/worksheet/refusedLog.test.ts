// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from 'vitest';
import { forgetAllRefused, forgetRefused, loadRefused, recordRefused, refusedMatching, REFUSED_KEPT } from './refusedLog.ts';

const noFilter = { q: '', status: [], statement_type: [], agent_id: '', session_id: '', since: '', until: '', slower_than_ms: '' };
const refusal = (sql: string) => ({ sql, status: 403, code: 'sql_not_allowed', message: 'no', worksheet: 'Worksheet 1' });

describe('refused submissions kept in this browser', () => {
  beforeEach(() => localStorage.clear());

  it('keeps them newest first, per workspace, up to the limit', () => {
    recordRefused('a', refusal('select 1'), new Date('2026-11-29T10:00:00Z'));
    recordRefused('a', refusal('select 2'), new Date('2026-11-29T10:01:00Z'));
    recordRefused('b', refusal('select 3'));
    expect(loadRefused('a').map((r) => r.sql)).toEqual(['select 2', 'select 1']);
    expect(loadRefused('b').map((r) => r.sql)).toEqual(['select 3']);
    for (let i = 0; i < REFUSED_KEPT + 5; i++) recordRefused('a', refusal(`select ${i}`));
    expect(loadRefused('a')).toHaveLength(REFUSED_KEPT);
    expect(loadRefused('a')[0].sql).toBe(`select ${REFUSED_KEPT + 4}`);
  });

  it('forgets one or all', () => {
    const one = recordRefused('a', refusal('select 1'));
    recordRefused('a', refusal('select 2'));
    forgetRefused('a', one.id);
    expect(loadRefused('a').map((r) => r.sql)).toEqual(['select 2']);
    forgetRefused('a');
    expect(loadRefused('a')).toEqual([]);
  });

  it('sign-out forgets every workspace’s refusals and nothing else', () => {
    recordRefused('a', refusal('select 1'));
    recordRefused('b', refusal('select 2'));
    localStorage.setItem('eider.theme', 'dark');
    forgetAllRefused();
    expect([loadRefused('a'), loadRefused('b')]).toEqual([[], []]);
    expect(localStorage.getItem('eider.theme')).toBe('dark');
  });

  it('unreadable storage reads as none', () => {
    localStorage.setItem('eider.refused.a', '{not json');
    expect(loadRefused('a')).toEqual([]);
  });

  it('History filters: text and time apply; a status other than failed, a type, agent or session leave none', () => {
    recordRefused('a', refusal('COPY x TO y'), new Date('2026-11-29T10:00:00Z'));
    const list = loadRefused('a');
    expect(refusedMatching(list, noFilter)).toHaveLength(1);
    expect(refusedMatching(list, { ...noFilter, q: 'copy' })).toHaveLength(1);
    expect(refusedMatching(list, { ...noFilter, q: 'select' })).toHaveLength(0);
    expect(refusedMatching(list, { ...noFilter, status: ['failed', 'done'] })).toHaveLength(1);
    expect(refusedMatching(list, { ...noFilter, status: ['done'] })).toHaveLength(0);
    expect(refusedMatching(list, { ...noFilter, statement_type: ['select'] })).toHaveLength(0);
    expect(refusedMatching(list, { ...noFilter, since: '2026-11-29T10:00:01Z' })).toHaveLength(0);
    expect(refusedMatching(list, { ...noFilter, until: '2026-11-29T10:00:01Z' })).toHaveLength(1);
  });
});
