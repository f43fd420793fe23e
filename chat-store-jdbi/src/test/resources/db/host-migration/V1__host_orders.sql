-- a host application's own table, migrated by the host's own Flyway (valid on SQLite and PostgreSQL)
CREATE TABLE host_orders (
    id   BIGINT NOT NULL PRIMARY KEY,
    note TEXT
);
