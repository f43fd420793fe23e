/**
 * The runtime SPI: how the engine drives an agent runtime. Implement
 * {@link dev.parley.chat.runtime.RuntimeAdapter}; use {@link dev.parley.chat.runtime.StreamPublisher} to
 * turn a callback- or thread-based stream into a {@link java.util.concurrent.Flow.Publisher} without
 * hand-rolling demand and cancellation, to mark the bursts a subscriber may take together
 * ({@link dev.parley.chat.runtime.BurstAwareSubscriber}) and where the stream stands in the runtime, so that a
 * restarted host can follow the run again ({@link dev.parley.chat.runtime.ResumableSubscriber}).
 */
@NullMarked
package dev.parley.chat.runtime;

import org.jspecify.annotations.NullMarked;
