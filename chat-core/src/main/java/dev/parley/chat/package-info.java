/**
 * Parley's core: the error type shared by every module. The message model lives in
 * {@link dev.parley.chat.model}, the events a runtime streams in {@link dev.parley.chat.event}, the runtime
 * SPI in {@link dev.parley.chat.runtime}, the reducer in {@link dev.parley.chat.reduce} and the JSON codec
 * in {@link dev.parley.chat.json}.
 *
 * <p>Unless a parameter, return value or record component is annotated {@code @Nullable}, it is never
 * null.
 */
@NullMarked
package dev.parley.chat;

import org.jspecify.annotations.NullMarked;
