package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.StreamPublisher;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.ScriptedModel;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** A builder or a settings record given a value it cannot use says so with a ChatException of code CONFIGURATION. */
class ConfigurationErrorsTest {
    private static final HostToolSpec LOOKUP = new HostToolSpec("lookup_order", "Finds an order", "{\"type\":\"object\"}");

    private static void refused(ThrowingCallable configuring, String saying) {
        assertThatThrownBy(configuring).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION)).hasMessageContaining(saying);
    }

    @Test
    void theEngineBuilderRefusesValuesItCannotUse() {
        refused(() -> ChatEngine.builder().leaseTimeout(Duration.ZERO), "leaseTimeout must be positive");
        refused(() -> ChatEngine.builder().controlTimeout(Duration.ofSeconds(-1)), "controlTimeout must be positive");
        refused(() -> ChatEngine.builder().eventRetention(Duration.ZERO), "eventRetention must be positive");
        refused(() -> ChatEngine.builder().deliveryThreads(0), "deliveryThreads must be positive, got 0");
        refused(() -> ChatEngine.builder().hostAction(new HostAction(LOOKUP, call -> "{}"))
                .hostAction(new HostAction(LOOKUP, call -> "{}")), "a host action named lookup_order exists");
    }

    @Test
    void anEngineWithoutAStoreOrARuntimeIsNotBuilt() {
        refused(() -> ChatEngine.builder().runtime(ScriptedRuntime.playing(Scripts.instant("hi"))).build(),
                "a ChatEngine needs a store");
        refused(() -> ChatEngine.builder().store(new InMemoryChatStore()).build(), "a ChatEngine needs a runtime");
    }

    @Test
    void limitsRefuseValuesThatAreNotPositiveOrPagesThatDoNotFit() {
        refused(() -> EngineLimits.defaults().withMaxMessageLength(0), "maxMessageLength must be positive, got 0");
        refused(() -> EngineLimits.defaults().withCancelGracePeriod(Duration.ZERO), "cancelGracePeriod must be positive");
        refused(() -> EngineLimits.defaults().withPageSizes(100, 10), "defaultPageSize must not exceed maxPageSize");
        refused(() -> EngineLimits.defaults().withHistory(10, -1), "historyCharacters must be positive");
    }

    @Test
    void approvalsTheAgentLoopAndPublishersRefuseValuesTheyCannotUse() {
        refused(() -> HostActionApproval.always(call -> "refund").withTimeout(Duration.ZERO),
                "an approval timeout must be positive");
        refused(() -> AgentLoopRuntime.builder(ScriptedModel.replying()).maxIterations(0),
                "maxIterations must be positive, got 0");
        refused(() -> StreamPublisher.create(0, emitter -> { }), "capacity must be at least 1, got 0");
    }
}
