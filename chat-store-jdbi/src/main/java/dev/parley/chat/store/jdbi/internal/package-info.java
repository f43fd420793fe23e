/**
 * The store's internals: the SQL it runs ({@link dev.parley.chat.store.jdbi.internal.Sql}), the few places
 * where SQLite and PostgreSQL differ ({@link dev.parley.chat.store.jdbi.internal.Dialect}), connection
 * handling and row mapping. Not API: anything here may change in any release.
 */
@NullMarked
package dev.parley.chat.store.jdbi.internal;

import org.jspecify.annotations.NullMarked;
