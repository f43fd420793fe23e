/**
 * Parley's agent loop over LangChain4j: {@link dev.parley.chat.langchain4j.LangChain4jModelClient} is a
 * {@link dev.parley.chat.agent.ModelClient} over any {@code StreamingChatModel}, for
 * {@link dev.parley.chat.agent.AgentLoopRuntime}.
 */
@NullMarked
package dev.parley.chat.langchain4j;

import org.jspecify.annotations.NullMarked;
