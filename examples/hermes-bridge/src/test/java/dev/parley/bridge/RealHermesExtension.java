package dev.parley.bridge;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Runs a test class against a {@link RealHermes} (injected as a parameter), started once for the whole test
 * run and shared by every class. Where no real Hermes is available the classes are skipped, and one line
 * says why; with {@value RealHermes#REQUIRED}=true they fail instead.
 */
final class RealHermesExtension implements ExecutionCondition, ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(RealHermes.class);
    private static final AtomicBoolean SAID = new AtomicBoolean();

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String reason = RealHermes.unavailableBecause();
        if (reason == null) {
            return ConditionEvaluationResult.enabled("a real Hermes Agent is available");
        }
        if (RealHermes.required()) {
            return ConditionEvaluationResult.enabled("required, so its absence fails the tests: " + reason);
        }
        String line = "Real Hermes tests skipped: " + reason + " (see examples/hermes-bridge/README.md, \"Against a real"
                + " Hermes\")";
        if (SAID.compareAndSet(false, true)) {
            System.out.println(line);
        }
        return ConditionEvaluationResult.disabled(line);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == RealHermes.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        String reason = RealHermes.unavailableBecause();
        if (reason != null) {
            throw new AssertionError(RealHermes.REQUIRED + "=true but no real Hermes Agent can run: " + reason);
        }
        return context.getRoot().getStore(NAMESPACE).computeIfAbsent(Started.class, key -> Started.start(), Started.class)
                .hermes();
    }

    /** The shared Hermes, or why it did not start (so later classes fail at once rather than start it again). */
    private record Started(@Nullable RealHermes started, @Nullable Exception failure) implements AutoCloseable {
        static Started start() {
            try {
                return new Started(RealHermes.start(), null);
            } catch (Exception e) {
                return new Started(null, e);
            }
        }

        RealHermes hermes() {
            if (failure != null) {
                throw new IllegalStateException("the real Hermes Agent did not start", failure);
            }
            return started;
        }

        @Override
        public void close() throws Exception {
            if (started != null) {
                started.close();
            }
        }
    }
}
