/**
 * The store's internals: one data-access object per aggregate, each holding its SQL and, where SQLite and
 * PostgreSQL differ, a sub-interface per database ({@link dev.parley.chat.store.jdbi.internal.ThreadDao},
 * {@link dev.parley.chat.store.jdbi.internal.MessageDao}, {@link dev.parley.chat.store.jdbi.internal.RunDao},
 * {@link dev.parley.chat.store.jdbi.internal.EventDao}, {@link dev.parley.chat.store.jdbi.internal.InputDao},
 * {@link dev.parley.chat.store.jdbi.internal.FeedbackDao},
 * {@link dev.parley.chat.store.jdbi.internal.HostActionDao}, {@link dev.parley.chat.store.jdbi.internal.AttachmentDao},
 * {@link dev.parley.chat.store.jdbi.internal.BlobDao}, {@link dev.parley.chat.store.jdbi.internal.SchemaDao}),
 * attached once ({@link dev.parley.chat.store.jdbi.internal.Daos}); the batched write composing them
 * ({@link dev.parley.chat.store.jdbi.internal.BatchWrite}); how events become rows of the event log
 * ({@link dev.parley.chat.store.jdbi.internal.EventRows}); what differs per database in its connections
 * ({@link dev.parley.chat.store.jdbi.internal.Dialect}); connection handling. DAO parameters are bound by
 * their names (the build compiles with {@code -parameters}). Not API: anything here may change in any
 * release.
 */
@NullMarked
package dev.parley.chat.store.jdbi.internal;

import org.jspecify.annotations.NullMarked;
