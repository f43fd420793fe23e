/**
 * Several hosts on one store: the {@link dev.parley.chat.cluster.RunCoordinator} SPI carries wake-ups
 * ("run r has events up to seq n") and control messages (cancel, a clarify answer) between engines, and
 * {@link dev.parley.chat.cluster.RunLease}s let a dead host's runs be taken over. A single host needs
 * none of it ({@link dev.parley.chat.cluster.RunCoordinator#local()}).
 */
@NullMarked
package dev.parley.chat.cluster;

import org.jspecify.annotations.NullMarked;
