package dev.parley.chat;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ErrorInfo;
import org.junit.jupiter.api.Test;

/** The documented set of run codes, read from the text a run's error carries. */
class RunErrorCodeTest {

    @Test
    void everyErrorCodeIsARunCodeOfTheSameName() {
        for (ErrorCode code : ErrorCode.values()) {
            assertThat(RunErrorCode.of(code).name()).isEqualTo(code.name());
            assertThat(RunErrorCode.of(code.name())).isEqualTo(RunErrorCode.of(code));
        }
    }

    @Test
    void aCodeThisVersionDoesNotKnowReadsAsNullAndStaysAsWritten() {
        assertThat(RunErrorCode.of("SESSION_BUSY")).isNull();
        assertThat(RunErrorCode.of("rate_limited")).as("codes are case-sensitive").isNull();
        assertThat(RunErrorCode.of((String) null)).isNull();
        ErrorInfo busy = new ErrorInfo("SESSION_BUSY", "the session is busy");
        assertThat(busy.knownCode()).isNull();
        assertThat(new ErrorInfo("INTERRUPTED", "the host restarted").knownCode()).isEqualTo(RunErrorCode.INTERRUPTED);

        ChatJson json = ChatJson.shared();
        assertThat(json.write(busy)).isEqualTo("{\"code\":\"SESSION_BUSY\",\"message\":\"the session is busy\"}");
        AgentStreamEvent read = json.readEvent("{\"type\":\"run_failed\",\"code\":\"FUTURE_CODE\",\"message\":\"m\"}");
        assertThat(read).isEqualTo(new AgentStreamEvent.RunFailed("FUTURE_CODE", "m", null));
    }

    @Test
    void aRetryHintTravelsWithTheErrorAndIsLeftOutWithoutOne() {
        ChatJson json = ChatJson.shared();
        AgentStreamEvent limited = new AgentStreamEvent.RunFailed("RATE_LIMITED", "slow down", 20L);
        String written = json.write(limited);
        assertThat(written).contains("\"retryAfterSeconds\":20");
        assertThat(json.readEvent(written)).isEqualTo(limited);
        assertThat(json.write(new AgentStreamEvent.RunFailed("RUNTIME_FAILED", "no"))).doesNotContain("retryAfter");
        ErrorInfo error = new ErrorInfo("RATE_LIMITED", "slow down", 20L);
        assertThat(json.convert(json.readTree(json.write(error)), ErrorInfo.class)).isEqualTo(error);
    }
}
