package dev.parley.chat.spring.internal;

import dev.parley.chat.agent.ModelClient;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;
import okhttp3.Interceptor;
import org.jspecify.annotations.Nullable;

/**
 * What the runtimes' auto-configurations add when runs are traced, in types that need no tracing library: so
 * they can take it without loading chat-observation's classes.
 *
 * @param taskDecorator carries the run's context to a runtime's own threads (Hermes')
 * @param modelClient observes a model client's calls, given the GenAI provider name
 * @param agentExecutor the agent loop's threads, each task in the context of the thread that submitted it
 * @param httpInterceptor observes Hermes' HTTP calls and sends their {@code traceparent}; null without
 *     micrometer-core
 */
public record RunTracing(UnaryOperator<Runnable> taskDecorator, BiFunction<ModelClient, String, ModelClient> modelClient,
        Executor agentExecutor, @Nullable Interceptor httpInterceptor) {
}
