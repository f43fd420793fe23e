package dev.parley.chat.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.json.ChatJson;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;

/** The HTTP status of every error code, and the problem body a model failure becomes. */
class ProblemsTest {

    @Test
    void everyCodeHasTheStatusTheReadmeLists() {
        Map<ErrorCode, HttpStatus> expected = new EnumMap<>(ErrorCode.class);
        expected.put(ErrorCode.NOT_FOUND, HttpStatus.NOT_FOUND);
        expected.put(ErrorCode.CONFLICT, HttpStatus.CONFLICT);
        expected.put(ErrorCode.INVALID_INPUT, HttpStatus.BAD_REQUEST);
        expected.put(ErrorCode.TOO_LARGE, HttpStatus.PAYLOAD_TOO_LARGE);
        expected.put(ErrorCode.UNSUPPORTED, HttpStatus.NOT_IMPLEMENTED);
        expected.put(ErrorCode.RUNTIME_UNAVAILABLE, HttpStatus.SERVICE_UNAVAILABLE);
        expected.put(ErrorCode.RUNTIME_FAILED, HttpStatus.BAD_GATEWAY);
        expected.put(ErrorCode.RATE_LIMITED, HttpStatus.SERVICE_UNAVAILABLE);
        expected.put(ErrorCode.AUTHENTICATION_FAILED, HttpStatus.BAD_GATEWAY);
        expected.put(ErrorCode.CONTEXT_TOO_LONG, HttpStatus.BAD_REQUEST);
        expected.put(ErrorCode.SLOW_CONSUMER, HttpStatus.TOO_MANY_REQUESTS);
        expected.put(ErrorCode.STORE_FAILURE, HttpStatus.SERVICE_UNAVAILABLE);
        expected.put(ErrorCode.CONFIGURATION, HttpStatus.INTERNAL_SERVER_ERROR);
        expected.put(ErrorCode.INTERNAL, HttpStatus.INTERNAL_SERVER_ERROR);
        assertThat(expected.keySet()).as("every code is listed here").containsExactlyInAnyOrder(ErrorCode.values());
        expected.forEach((code, status) -> assertThat(Problems.status(code)).as(code.name()).isEqualTo(status));
    }

    @Test
    void aModelFailureIsAProblemWithItsCode() {
        ResponseEntity<byte[]> problem = Problems.of(ModelFailure.ofHttpStatus(429, "slow down", null,
                Duration.ofSeconds(20)), "/api/chat/x");
        JsonNode body = ChatJson.shared().readTree(new String(problem.getBody(), StandardCharsets.UTF_8));
        assertThat(problem.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(body.get("code").asText()).isEqualTo("RATE_LIMITED");
        assertThat(body.get("type").asText()).isEqualTo("urn:parley:error:rate-limited");
        assertThat(body.get("detail").asText()).endsWith("(retry after 20 s)");
    }
}
