// The app's one icon set: 24-unit stroked outlines (in the manner of Feather/Lucide, drawn here so no icon package
// is loaded), at the type's size in the current text colour. Decorative: hidden from assistive technology, so
// the control or notice carries its own words.
const PATHS = {
  play: 'M7 4.5v15l12-7.5z',
  stop: 'M6 6h12v12H6z',
  refresh: 'M20 11a8 8 0 0 0-14.3-4.9L4 8M4 4v4h4M4 13a8 8 0 0 0 14.3 4.9L20 16M20 20v-4h-4',
  alert: 'M12 3 2 20h20zM12 10v4M12 17h.01',
  inbox: 'M3 13h5l1.5 3h5l1.5-3h5M5.5 5h13L21 13v6H3v-6z',
  search: 'M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14zM21 21l-5-5',
  check: 'M4 12.5 9 17.5 20 6.5',
  plus: 'M12 5v14M5 12h14',
  save: 'M5 4h11l3 3v13H5zM8 4v5h7V4M8 20v-6h8v6',
  wand: 'M4 20 14 10M15 4v3M19 8h-3M18 5l-2 2M12 6l1 1',
  download: 'M12 4v11M7 10l5 5 5-5M5 20h14',
  database: 'M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3zM4 6v12c0 1.7 3.6 3 8 3s8-1.3 8-3V6M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3',
  table: 'M3 5h18v14H3zM3 10h18M3 15h18M9 5v14',
  // the navigation rail's
  code: 'M5 3h10l4 4v14H5zM14 3v5h5M10 12l-2 2.5 2 2.5M14 12l2 2.5-2 2.5',
  pulse: 'M3 12h4l2-6 4 12 2-6h6',
  layers: 'M12 3 3 8l9 5 9-5zM3 13l9 5 9-5',
  clock: 'M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18zM12 7v5l3 2',
  calendar: 'M4 6h16v14H4zM4 10h16M8 3v5M16 3v5',
  terminal: 'M4 5h16v14H4zM8 10l2.5 2L8 14M12.5 15H16',
  users: 'M9 11a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7zM3 20c0-3.3 2.7-6 6-6s6 2.7 6 6M16 4.5a3.5 3.5 0 0 1 0 6.5M18 14.5c1.8.9 3 2.9 3 5.5',
  server: 'M4 4h16v7H4zM4 13h16v7H4zM8 7.5h.01M8 16.5h.01',
  bolt: 'M13 2 4 14h7l-1 8 9-12h-7z',
  shield: 'M12 3 4 6v6c0 4.5 3.4 8 8 9 4.6-1 8-4.5 8-9V6zM9 12l2 2 4-4',
  sparkle: 'M12 3l2 5.5L19.5 10.5 14 12.5 12 18l-2-5.5-5.5-2L10 8.5zM19 17v4M17 19h4',
  logout: 'M9 4H5v16h4M16 8l4 4-4 4M20 12H10',
} as const;

export type IconName = keyof typeof PATHS;

export function Icon(props: { name: IconName; className?: string }) {
  return (
    <svg className={`icon${props.className ? ` ${props.className}` : ''}`} viewBox="0 0 24 24" aria-hidden="true" focusable="false" data-icon={props.name}>
      <path d={PATHS[props.name]} />
    </svg>
  );
}
