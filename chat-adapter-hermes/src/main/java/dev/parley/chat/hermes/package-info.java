/**
 * The Hermes runtime adapter: {@link dev.parley.chat.hermes.HermesRuntimeAdapter} drives Hermes Agent
 * (NousResearch) either through a Hermes Bridge speaking the Bridge protocol v1
 * ({@code docs/hermes-bridge-protocol.md}) or through Hermes' own API server ({@code /v1/runs}). Configure
 * it with {@link dev.parley.chat.hermes.HermesConfig}; models and skills come from a
 * {@link dev.parley.chat.hermes.ModelResolver} and a {@link dev.parley.chat.runtime.SkillResolver}.
 *
 * <p>Unless a parameter, return value or record component is annotated {@code @Nullable}, it is never
 * null. Secrets (bearer tokens, model API keys) never appear in {@code toString()}, exception messages,
 * log lines or emitted events.
 */
@NullMarked
package dev.parley.chat.hermes;

import org.jspecify.annotations.NullMarked;
