/**
 * One agent loop for any model: {@link dev.parley.chat.agent.AgentLoopRuntime} is a
 * {@link dev.parley.chat.runtime.RuntimeAdapter} that calls a model through a {@link dev.parley.chat.agent.ModelClient}
 * (implemented over LangChain4j, Spring AI, or anything that streams), streams its text, thinking and tool
 * calls as Parley events, lets the engine run each tool call — a host action (with its approval policy) or a
 * tool the person's browser runs — feeds the results back and calls the model again, until an answer, the
 * iteration budget, a cancel or an error.
 */
@NullMarked
package dev.parley.chat.agent;

import org.jspecify.annotations.NullMarked;
