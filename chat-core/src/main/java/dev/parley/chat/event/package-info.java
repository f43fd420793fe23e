/**
 * What a runtime streams during a run ({@link dev.parley.chat.event.AgentStreamEvent}) and how the engine
 * logs it ({@link dev.parley.chat.event.RunEvent}). Immutable values, safe to share between threads.
 */
@NullMarked
package dev.parley.chat.event;

import org.jspecify.annotations.NullMarked;
