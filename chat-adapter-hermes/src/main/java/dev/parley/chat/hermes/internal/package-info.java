/**
 * Internals of the Hermes adapter: the two transports' run loops, HTTP and SSE plumbing. Not an API;
 * anything here may change without notice.
 */
@NullMarked
package dev.parley.chat.hermes.internal;

import org.jspecify.annotations.NullMarked;
