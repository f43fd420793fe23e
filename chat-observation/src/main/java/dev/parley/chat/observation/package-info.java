/**
 * Traces of Parley's runs through Micrometer's Observation API: {@link dev.parley.chat.observation.RunObservations}
 * gives the engine listener, the context propagator, the model-client decorator and the task decorator that
 * together make one observation per run, per model call, per tool call and per wait for a person. Nothing is
 * observed unless a host passes an {@code ObservationRegistry} with handlers (a tracer, meters).
 */
@NullMarked
package dev.parley.chat.observation;

import org.jspecify.annotations.NullMarked;
