/**
 * The durable {@link dev.parley.chat.store.ChatStore}: {@link dev.parley.chat.store.jdbi.JdbiChatStore} on
 * a SQLite file (the embedded default) or on PostgreSQL (production, several host instances), with its
 * schema versioned by Flyway ({@link dev.parley.chat.store.jdbi.ParleyMigrations}). The store also keeps
 * attachments, and {@link dev.parley.chat.store.jdbi.JdbiBlobStore} their bytes in the same database.
 * Internals live in {@code dev.parley.chat.store.jdbi.internal} and are not API.
 */
@NullMarked
package dev.parley.chat.store.jdbi;

import org.jspecify.annotations.NullMarked;
