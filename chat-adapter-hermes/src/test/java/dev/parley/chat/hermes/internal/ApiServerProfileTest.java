package dev.parley.chat.hermes.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.hermes.FeatureSetting;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.runtime.ModelOption;
import org.junit.jupiter.api.Test;

/** Which behaviours a server's own description (capabilities first, then its version) and the host's pins choose. */
class ApiServerProfileTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HermesConfig DETECT = HermesConfig.builder().baseUrl("http://127.0.0.1:1").build();

    private static JsonNode json(String text) throws Exception {
        return JSON.readTree(text);
    }

    private static JsonNode health(String version) throws Exception {
        return json("{\"status\": \"ok\", \"platform\": \"hermes-agent\", \"version\": \"" + version + "\"}");
    }

    @Test
    void a019ServerGetsHistoryNoRetriedStartAndNoClarify() throws Exception {
        JsonNode caps = json("{\"features\": {\"run_submission\": true, \"run_approval_response\": true,"
                + " \"session_continuity_header\": \"X-Hermes-Session-Id\"}, \"endpoints\": {\"run_approval\":"
                + " {\"method\": \"POST\", \"path\": \"/v1/runs/{run_id}/approval\"}}}");

        ApiServerProfile server = ApiServerProfile.of(health("0.19.0"), caps, null, DETECT);

        assertThat(server.version()).isEqualTo("0.19.0");
        assertThat(server.restoresSessionHistory()).isFalse();
        assertThat(server.honoursIdempotencyKey()).isFalse();
        assertThat(server.hasClarify()).isFalse();
        assertThat(server.hasApprovals()).isTrue();
    }

    @Test
    void theCapabilitiesSpeakFirstAndTheVersionWhereTheyAreSilent() throws Exception {
        JsonNode managed = json("{\"features\": {\"managed_run_history_authority\": \"hermes_session_db\"},"
                + " \"durable\": {\"idempotency\": {\"supported\": true}}, \"endpoints\": {\"run_clarify\":"
                + " {\"method\": \"POST\", \"path\": \"/v1/runs/{run_id}/clarify\"}}}");
        ApiServerProfile said = ApiServerProfile.of(health("0.19.9"), managed, null, DETECT);
        assertThat(said.restoresSessionHistory()).isTrue();
        assertThat(said.honoursIdempotencyKey()).isTrue();
        assertThat(said.hasClarify()).isTrue();

        ApiServerProfile byVersion = ApiServerProfile.of(health("v0.20.1"), null, null, DETECT);
        assertThat(byVersion.restoresSessionHistory()).isTrue();
        assertThat(byVersion.honoursIdempotencyKey()).isTrue();
        assertThat(byVersion.hasClarify()).as("clarify only where advertised").isFalse();

        ApiServerProfile silent = ApiServerProfile.unknown(DETECT);
        assertThat(silent.restoresSessionHistory()).as("a server that says nothing is the oldest line").isFalse();
        assertThat(silent.honoursIdempotencyKey()).isFalse();

        JsonNode noApprovals = json("{\"features\": {\"run_approval_response\": false}}");
        assertThat(ApiServerProfile.of(health("0.19.0"), noApprovals, null, DETECT).hasApprovals()).isFalse();
    }

    @Test
    void pinsOverrideWhatTheServerSays() throws Exception {
        HermesConfig pinned = HermesConfig.builder().baseUrl("http://127.0.0.1:1")
                .apiServerSessionHistory(FeatureSetting.OFF).apiServerIdempotentStart(FeatureSetting.OFF)
                .apiServerClarify(FeatureSetting.ON).build();

        ApiServerProfile server = ApiServerProfile.of(health("0.21.0"), null, null, pinned);

        assertThat(server.restoresSessionHistory()).isFalse();
        assertThat(server.honoursIdempotencyKey()).isFalse();
        assertThat(server.hasClarify()).isTrue();
    }

    @Test
    void versionsAreComparedByTheirNumbers() {
        assertThat(ApiServerProfile.atLeast("0.20.0", 0, 20)).isTrue();
        assertThat(ApiServerProfile.atLeast("0.21.3rc1", 0, 20)).isTrue();
        assertThat(ApiServerProfile.atLeast("1.0", 0, 20)).isTrue();
        assertThat(ApiServerProfile.atLeast("0.19.12", 0, 20)).isFalse();
        assertThat(ApiServerProfile.atLeast("dev", 0, 20)).isFalse();
        assertThat(ApiServerProfile.atLeast(null, 0, 20)).isFalse();
    }

    @Test
    void theServersModelsAreListedWithoutProvider() throws Exception {
        JsonNode models = json("{\"object\": \"list\", \"data\": [{\"id\": \"hermes-agent\"}, {\"id\": \"fast\"}, {}]}");

        assertThat(ApiServerProfile.of(health("0.19.0"), null, models, DETECT).models()).containsExactly(
                new ModelOption("hermes-agent", "hermes-agent", null), new ModelOption("fast", "fast", null));
    }

    @Test
    void interactiveClarifyDecidesWhereTheServerHasTheFlag() throws Exception {
        String clarifyRoute = ", \"endpoints\": {\"run_clarify\": {\"method\": \"POST\", \"path\": \"/v1/runs/{run_id}/clarify\"}}";
        JsonNode off = json("{\"features\": {\"run_approval_response\": true, \"interactive_clarify\": false,"
                + " \"run_steer\": true, \"approval_pending_list\": true}" + clarifyRoute + "}");
        JsonNode on = json("{\"features\": {\"run_approval_response\": true, \"interactive_clarify\": true,"
                + " \"run_steer\": true, \"approval_pending_list\": true}}");

        assertThat(ApiServerProfile.of(health("0.19.17"), off, null, DETECT).hasClarify())
                .as("the flag says no, whatever routes are listed").isFalse();
        assertThat(ApiServerProfile.of(health("0.19.17"), on, null, DETECT).hasClarify()).isTrue();
    }
}
