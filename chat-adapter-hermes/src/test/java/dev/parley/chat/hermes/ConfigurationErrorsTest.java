package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.time.Duration;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** The adapter's configuration refuses values it cannot use with a ChatException of code CONFIGURATION. */
class ConfigurationErrorsTest {

    private static void refused(ThrowingCallable configuring, String saying) {
        assertThatThrownBy(configuring).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION)).hasMessageContaining(saying);
    }

    @Test
    void theBuilderRefusesValuesItCannotUse() {
        refused(() -> HermesConfig.builder().build(), "a base URL is required");
        refused(() -> HermesConfig.builder().baseUrl("ftp://user:secret@example.com"), "not an http(s) URL");
        refused(() -> HermesConfig.builder().idleTimeout(Duration.ZERO), "idleTimeout must be positive");
        refused(() -> HermesConfig.builder().defaultMaxIterations(0), "defaultMaxIterations must be at least 1");
        refused(() -> HermesConfig.builder().reattachAttempts(-1), "reattachAttempts must not be negative");
        refused(() -> HermesConfig.builder().apiServerApprovalTimeout(Duration.ofSeconds(-1)),
                "apiServerApprovalTimeout must not be negative");
    }

    @Test
    void aBadUrlIsNotRepeatedInTheError() {
        assertThatThrownBy(() -> HermesConfig.builder().baseUrl("ftp://user:secret@example.com"))
                .hasMessageNotContaining("secret");
    }

    @Test
    void modelsNeedAnIdAndANameAndUniqueIds() {
        refused(() -> new HermesModel(" ", "gpt", null, null, null), "must not be blank");
        refused(() -> ModelResolver.of(List.of(HermesModel.named("gpt"), HermesModel.named("gpt"))),
                "duplicate model id: gpt");
    }
}
