/** The implementation of {@link dev.parley.chat.observation.RunObservations}; not API. */
@NullMarked
package dev.parley.chat.observation.internal;

import org.jspecify.annotations.NullMarked;
