/**
 * The reducer: the one definition of how a run's events become messages. See
 * {@link dev.parley.chat.reduce.RunReducer}.
 */
@NullMarked
package dev.parley.chat.reduce;

import org.jspecify.annotations.NullMarked;
