/** Internals of the runtime SPI's helpers: the skills directory. Not an API; anything here may change without notice. */
@NullMarked
package dev.parley.chat.runtime.internal;

import org.jspecify.annotations.NullMarked;
