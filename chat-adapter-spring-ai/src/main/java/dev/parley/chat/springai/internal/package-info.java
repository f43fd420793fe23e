/** Internals of the Spring AI adapter; not a public API, may change in any release. */
@NullMarked
package dev.parley.chat.springai.internal;

import org.jspecify.annotations.NullMarked;
