/**
 * The engine: {@link dev.parley.chat.engine.ChatEngine} and the values its API takes and returns.
 * Internals live in {@code dev.parley.chat.engine.internal} and are not API.
 *
 * <h2>Time and threads</h2>
 * The engine reads time only from its {@link java.time.Clock} ({@code Builder.clock}) and waits only through
 * its scheduler ({@code Builder.scheduler}): a stopped run's grace period, input deadlines, lease renewals and
 * take-overs, a deletion's patience. Its work runs on its executor ({@code Builder.executor}), events reach
 * subscribers on its delivery threads, and one batch-writer thread stores them. A host (or a simulation)
 * that gives the engine a clock and a scheduler of its own decides when every deadline passes: the
 * simulation in this project's test tree runs engines on virtual time this way, with seeded operations and
 * faults, and checks the engine's promises after every step (see docs/RELIABILITY.md). The executor and the
 * delivery threads stay real threads, so an interleaving is not reproduced exactly; the operations and the
 * faults are.
 */
@NullMarked
package dev.parley.chat.engine;

import org.jspecify.annotations.NullMarked;
