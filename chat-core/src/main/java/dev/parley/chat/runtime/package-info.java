/**
 * The runtime SPI: how the engine drives an agent runtime. Implement
 * {@link dev.parley.chat.runtime.RuntimeAdapter}; use {@link dev.parley.chat.runtime.StreamPublisher} to
 * turn a callback- or thread-based stream into a {@link java.util.concurrent.Flow.Publisher} without
 * hand-rolling demand and cancellation, and to mark the bursts a subscriber may take together
 * ({@link dev.parley.chat.runtime.BurstAwareSubscriber}).
 */
@NullMarked
package dev.parley.chat.runtime;

import org.jspecify.annotations.NullMarked;
