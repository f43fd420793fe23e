package dev.parley.chat.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** How adapters turn a provider's HTTP error into a failure the person can act on. */
class ModelFailureTest {

    @Test
    void statusesMapToKinds() {
        assertThat(ModelFailure.ofHttpStatus(429, null, null).kind()).isEqualTo(ModelFailure.Kind.RATE_LIMITED);
        assertThat(ModelFailure.ofHttpStatus(401, null, null).kind()).isEqualTo(ModelFailure.Kind.AUTHENTICATION);
        assertThat(ModelFailure.ofHttpStatus(403, null, null).kind()).isEqualTo(ModelFailure.Kind.AUTHENTICATION);
        assertThat(ModelFailure.ofHttpStatus(400, "{\"error\":{\"message\":\"bad temperature\"}}", null).kind())
                .isEqualTo(ModelFailure.Kind.INVALID_REQUEST);
        assertThat(ModelFailure.ofHttpStatus(503, "overloaded", null).kind()).isEqualTo(ModelFailure.Kind.UNREACHABLE);
        assertThat(ModelFailure.ofHttpStatus(408, null, null).kind()).isEqualTo(ModelFailure.Kind.UNREACHABLE);
        assertThat(ModelFailure.ofHttpStatus(302, null, null).kind()).isEqualTo(ModelFailure.Kind.FAILED);
    }

    @Test
    void contextWindowErrorsAreRecognisedAsProvidersWordThem() {
        String openAi = "{\"error\":{\"message\":\"This model's maximum context length is 8192 tokens. However, your"
                + " messages resulted in 9001 tokens.\",\"type\":\"invalid_request_error\",\"param\":\"messages\","
                + "\"code\":\"context_length_exceeded\"}}";
        ModelFailure failure = ModelFailure.ofHttpStatus(400, openAi, null);
        assertThat(failure.kind()).isEqualTo(ModelFailure.Kind.CONTEXT_TOO_LONG);
        assertThat(failure.getMessage()).endsWith(": This model's maximum context length is 8192 tokens. However, your"
                + " messages resulted in 9001 tokens.");
        assertThat(ModelFailure.isContextTooLong("{\"error\":\"the request exceeds the available context size\"}"))
                .isTrue();
        assertThat(ModelFailure.isContextTooLong("prompt is too long: 210000 tokens > 200000 maximum")).isTrue();
        assertThat(ModelFailure.isContextTooLong("Invalid value for 'temperature'")).isFalse();
        assertThat(ModelFailure.isContextTooLong(null)).isFalse();
    }

    @Test
    void aRefusedKeyIsNeverQuotedAndLongTextIsShortened() {
        ModelFailure auth = ModelFailure.ofHttpStatus(401,
                "{\"error\":{\"message\":\"Incorrect API key provided: sk-live-abc123.\"}}", null);
        assertThat(auth.getMessage()).isEqualTo("The model provider refused the credentials (HTTP 401)")
                .doesNotContain("sk-live");
        ModelFailure limited = ModelFailure.ofHttpStatus(429, "x".repeat(1000), null);
        assertThat(limited.getMessage()).hasSizeLessThan(400).endsWith("…");
        assertThat(ModelFailure.ofHttpStatus(429, "{\"error\":\"slow down\"}", null).getMessage())
                .isEqualTo("The model provider is limiting requests (HTTP 429): slow down");
        assertThat(ModelFailure.ofHttpStatus(429, "{not json", null).getMessage()).endsWith(": {not json");
    }

    @Test
    void aRateLimitsRetryAfterIsKeptAndSaid() {
        Instant now = Instant.parse("2026-08-01T10:00:00Z");
        assertThat(ModelFailure.parseRetryAfter("20", now)).isEqualTo(Duration.ofSeconds(20));
        assertThat(ModelFailure.parseRetryAfter(" 0 ", now)).isEqualTo(Duration.ZERO);
        assertThat(ModelFailure.parseRetryAfter("Sat, 01 Aug 2026 10:01:30 GMT", now)).isEqualTo(Duration.ofSeconds(90));
        assertThat(ModelFailure.parseRetryAfter("Sat, 01 Aug 2026 09:00:00 GMT", now)).isEqualTo(Duration.ZERO);
        assertThat(ModelFailure.parseRetryAfter("-5", now)).isNull();
        assertThat(ModelFailure.parseRetryAfter("soon", now)).isNull();
        assertThat(ModelFailure.parseRetryAfter(null, now)).isNull();

        ModelFailure limited = ModelFailure.ofHttpStatus(429, "{\"error\":\"slow down\"}", null, Duration.ofSeconds(20));
        assertThat(limited.kind()).isEqualTo(ModelFailure.Kind.RATE_LIMITED);
        assertThat(limited.retryAfter()).isEqualTo(Duration.ofSeconds(20));
        assertThat(limited.retryAfterSeconds()).isEqualTo(20L);
        assertThat(limited.getMessage())
                .isEqualTo("The model provider is limiting requests (HTTP 429): slow down (retry after 20 s)");
        assertThat(ModelFailure.ofHttpStatus(503, "busy", null, Duration.ofSeconds(5)).retryAfter())
                .as("only a rate limit keeps it").isNull();
    }

    @Test
    void aModelFailureIsAChatExceptionWhoseCodeIsTheRunsCode() {
        ModelFailure limited = ModelFailure.ofHttpStatus(429, null, null, Duration.ofMillis(1_500));
        assertThat(limited).isInstanceOf(ChatException.class);
        assertThat(limited.code()).isEqualTo(ErrorCode.RATE_LIMITED);
        assertThat(limited.retryAfterSeconds()).as("rounded up").isEqualTo(2L);
        assertThat(limited.getMessage()).endsWith("(retry after 2 s)");
        assertThat(ModelFailure.ofHttpStatus(401, null, null).code()).isEqualTo(ErrorCode.AUTHENTICATION_FAILED);
        assertThat(ModelFailure.ofHttpStatus(400, "context_length_exceeded", null).code())
                .isEqualTo(ErrorCode.CONTEXT_TOO_LONG);
        assertThat(ModelFailure.ofHttpStatus(503, null, null).code()).isEqualTo(ErrorCode.RUNTIME_UNAVAILABLE);
        assertThat(ModelFailure.ofHttpStatus(400, null, null).code()).isEqualTo(ErrorCode.INVALID_INPUT);
        assertThat(ModelFailure.ofHttpStatus(302, null, null).code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
        assertThat(new ModelFailure(ModelFailure.Kind.FAILED, "no").retryAfterSeconds()).isNull();
    }
}
