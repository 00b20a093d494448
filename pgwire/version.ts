// What the endpoint says it is. Drivers parse the version (JDBC, SQLAlchemy read "PostgreSQL <major>.<minor>"), and
// 15 is the dialect the pg_catalog answers follow.
export const SERVER_VERSION = '15.0';
export const SERVER_VERSION_TEXT = `PostgreSQL ${SERVER_VERSION} (Eider; DuckDB over Iceberg) on x86_64-pc-linux-gnu, compiled by eider, 64-bit`;
