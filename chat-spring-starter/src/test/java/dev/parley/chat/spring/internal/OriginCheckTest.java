package dev.parley.chat.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;

/**
 * The Origin rule: what counts as the request's own origin (default ports, case, IPv6), what an allowed
 * origin may be, and which requests it looks at. The rule over real HTTP is in BadInputChangesNothingHttpTest.
 */
class OriginCheckTest {
    private static MockHttpServletRequest post(String scheme, String host, int port, String origin) {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/api/chat/runs/r/cancel");
        request.setScheme(scheme);
        request.setServerName(host);
        request.setServerPort(port);
        if (origin != null) {
            request.addHeader("Origin", origin);
        }
        return request;
    }

    @Test
    void theRequestsOwnOriginPassesWrittenAnyWayABrowserWrites() {
        OriginCheck check = new OriginCheck(List.of());
        assertThatCode(() -> check.check(post("https", "chat.example.com", 443, "https://chat.example.com")))
                .doesNotThrowAnyException();
        assertThatCode(() -> check.check(post("http", "localhost", 8080, "HTTP://LocalHost:8080")))
                .doesNotThrowAnyException();
        assertThatCode(() -> check.check(post("http", "[::1]", 8080, "http://[::1]:8080"))).doesNotThrowAnyException();
        assertThatCode(() -> check.check(post("http", "::1", 8080, "http://[::1]:8080"))).doesNotThrowAnyException();
        assertThatCode(() -> check.check(post("http", "localhost", 8080, null))).as("no Origin: not a browser")
                .doesNotThrowAnyException();
    }

    @Test
    void anotherSchemeHostOrPortIsAnotherOrigin() {
        OriginCheck check = new OriginCheck(List.of("https://app.example.com"));
        for (String origin : List.of("http://chat.example.com", "https://chat.example.com:8443",
                "https://evil.example", "https://chat.example.com.evil.example", "null", "https://app.example.com:444",
                "not an origin")) {
            assertThatThrownBy(() -> check.check(post("https", "chat.example.com", 443, origin))).as(origin)
                    .isInstanceOf(CrossOrigin.class).hasMessageContaining("parley.web.allowed-origins");
        }
        assertThatCode(() -> check.check(post("https", "chat.example.com", 443, "https://app.example.com:443")))
                .doesNotThrowAnyException();
    }

    @Test
    void safeMethodsAreNotLookedAt() {
        MockHttpServletRequest get = post("https", "chat.example.com", 443, "https://evil.example");
        get.setMethod("GET");
        assertThatCode(() -> new OriginCheck(List.of()).check(get)).doesNotThrowAnyException();
    }

    @Test
    void anAllowedOriginMustBeAnOrigin() {
        for (String bad : List.of("app.example.com", "https://app.example.com/chat", "*", "https://user@app.example.com")) {
            assertThatThrownBy(() -> new OriginCheck(List.of(bad))).as(bad)
                    .isInstanceOfSatisfying(ChatException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION)).hasMessageContaining("parley.web.allowed-origins");
        }
        assertThat(OriginCheck.normalize("https://App.Example.com/")).isEqualTo("https://app.example.com:443");
    }
}
