/**
 * The engine: {@link dev.parley.chat.engine.ChatEngine} and the values its API takes and returns.
 * Internals live in {@code dev.parley.chat.engine.internal} and are not API.
 */
@NullMarked
package dev.parley.chat.engine;

import org.jspecify.annotations.NullMarked;
