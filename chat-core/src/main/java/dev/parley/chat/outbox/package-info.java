/**
 * A durable outbox of notifications about runs, for a host that must be told when a run ends or waits for a
 * person (webhooks: the {@code chat-webhooks} module). {@link dev.parley.chat.outbox.OutboxRouting} says which
 * destinations want which {@link dev.parley.chat.outbox.OutboxEventType}; given one
 * ({@link dev.parley.chat.engine.ChatEngine.Builder#outbox}), the engine puts an
 * {@link dev.parley.chat.outbox.OutboxEntry} per destination into the very store write that stores the run's
 * end or its input request, so a crash neither loses nor invents one. A store that keeps an outbox implements
 * {@link dev.parley.chat.outbox.OutboxStore} beside {@link dev.parley.chat.store.ChatStore}; a dispatcher
 * claims its entries with a lease, delivers them and removes them.
 */
@NullMarked
package dev.parley.chat.outbox;

import org.jspecify.annotations.NullMarked;
