/**
 * Parley's agent loop over Spring AI: {@link dev.parley.chat.springai.SpringAiModelClient} is a
 * {@link dev.parley.chat.agent.ModelClient} over any Spring AI {@code ChatModel}'s streaming, for
 * {@link dev.parley.chat.agent.AgentLoopRuntime}.
 */
@NullMarked
package dev.parley.chat.springai;

import org.jspecify.annotations.NullMarked;
