/**
 * Pending inputs: the three ways a run stops and waits for a person — a clarify question, an approval of
 * a risky call, a tool that runs in the person's browser — as one concept with one life cycle
 * ({@link dev.parley.chat.input.InputState}), one request and answer shape per kind, and one record
 * ({@link dev.parley.chat.input.PendingInput}) the store keeps.
 */
@NullMarked
package dev.parley.chat.input;

import org.jspecify.annotations.NullMarked;
