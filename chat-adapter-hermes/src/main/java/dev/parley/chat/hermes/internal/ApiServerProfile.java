package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.parley.chat.hermes.FeatureSetting;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.runtime.ModelOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What a Hermes API server says about itself ({@code GET /health}: its version; {@code GET /v1/capabilities}:
 * its features and endpoints; {@code GET /v1/models}), and the behaviours the adapter chooses from that and
 * from the host's pins ({@link FeatureSetting}). Where the capabilities are silent the version decides; a
 * server that says nothing at all is treated as the oldest line the adapter knows (0.19). Immutable.
 */
public final class ApiServerProfile {
    private static final Pattern VERSION = Pattern.compile("v?(\\d+)\\.(\\d+)");

    private final @Nullable String version;
    private final boolean sessionHistory;
    private final boolean idempotentStart;
    private final boolean clarify;
    private final boolean approvals;
    private final List<ModelOption> models;

    private ApiServerProfile(@Nullable String version, boolean sessionHistory, boolean idempotentStart,
            boolean clarify, boolean approvals, List<ModelOption> models) {
        this.version = version;
        this.sessionHistory = sessionHistory;
        this.idempotentStart = idempotentStart;
        this.clarify = clarify;
        this.approvals = approvals;
        this.models = List.copyOf(models);
    }

    /**
     * The profile of a server from its answers; any of them may be missing (null), e.g. a server too old
     * for {@code /v1/capabilities}.
     */
    static ApiServerProfile of(@Nullable JsonNode health, @Nullable JsonNode capabilities, @Nullable JsonNode models,
            HermesConfig config) {
        String version = health == null ? null : BridgeRun.text(health, "version");
        JsonNode features = capabilities == null ? MissingNode.getInstance() : capabilities.path("features");
        boolean newer = atLeast(version, 0, 20);
        boolean restores = "hermes_session_db".equals(features.path("managed_run_history_authority").asText(null))
                || features.path("managed_run_sessions").asBoolean(false) || newer;
        boolean idempotent = saysYes(features, "idempotency") || supported(capabilities == null ? null
                : capabilities.path("durable").path("idempotency")) || newer;
        JsonNode interactive = features.path("interactive_clarify");
        boolean clarify = interactive.isBoolean() ? interactive.asBoolean()
                : capabilities != null && (hasClarifyEndpoint(capabilities.path("endpoints")) || saysYes(features, "clarify"));
        boolean approvals = !features.path("run_approval_response").isBoolean()
                || features.path("run_approval_response").asBoolean();
        return new ApiServerProfile(version, pick(config.apiServerSessionHistory(), restores),
                pick(config.apiServerIdempotentStart(), idempotent), pick(config.apiServerClarify(), clarify), approvals,
                modelOptions(models));
    }

    /** A server that could not be asked: the oldest line's behaviours, unless pinned. */
    static ApiServerProfile unknown(HermesConfig config) {
        return of(null, null, null, config);
    }

    /** The version on {@code /health}, or null if it gave none. */
    public @Nullable String version() {
        return version;
    }

    /** {@code session_id} restores the session's earlier turns (0.20 and later): no history is sent. */
    public boolean restoresSessionHistory() {
        return sessionHistory;
    }

    /** {@code Idempotency-Key} on {@code POST /v1/runs} is honoured: a start may be sent again. */
    public boolean honoursIdempotencyKey() {
        return idempotentStart;
    }

    /**
     * Clarify questions exist ({@code clarify.request}, {@code POST /v1/runs/{id}/clarify}): the server's
     * {@code interactive_clarify} flag where it has one (0.19.17: off by default, and then the model has no clarify
     * tool), else a clarify endpoint or feature it advertises.
     */
    public boolean hasClarify() {
        return clarify;
    }

    /** Approval requests can be answered ({@code POST /v1/runs/{id}/approval}); only a server that says no lacks it. */
    public boolean hasApprovals() {
        return approvals;
    }

    /** The server's models ({@code /v1/models}), for a host that lists none itself. */
    public List<ModelOption> models() {
        return models;
    }

    /** For logs and the health line: the version and the behaviours chosen. */
    public String describe() {
        return "Hermes " + (version == null ? "(version unknown)" : version) + "; memory: "
                + (sessionHistory ? "session_id" : "conversation_history") + "; start "
                + (idempotentStart ? "retried with its Idempotency-Key" : "sent once") + "; clarify "
                + (clarify ? "on" : "off");
    }

    @Override
    public String toString() {
        return "ApiServerProfile[" + describe() + "]";
    }

    /** Whether {@code version} is at least {@code major.minor}; false when it is unknown or unreadable. */
    static boolean atLeast(@Nullable String version, int major, int minor) {
        if (version == null) {
            return false;
        }
        Matcher m = VERSION.matcher(version.trim().toLowerCase(Locale.ROOT));
        if (!m.lookingAt()) {
            return false;
        }
        int maj = Integer.parseInt(m.group(1));
        int min = Integer.parseInt(m.group(2));
        return maj > major || (maj == major && min >= minor);
    }

    private static boolean pick(FeatureSetting setting, boolean detected) {
        return setting == FeatureSetting.DETECT ? detected : setting == FeatureSetting.ON;
    }

    /** Whether a feature whose name contains {@code word} says yes: true, or {@code {"supported": true}}. */
    private static boolean saysYes(JsonNode features, String word) {
        for (Iterator<Map.Entry<String, JsonNode>> it = features.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            JsonNode value = field.getValue();
            if (field.getKey().contains(word) && (value.isBoolean() && value.asBoolean() || supported(value))) {
                return true;
            }
        }
        return false;
    }

    private static boolean supported(@Nullable JsonNode fact) {
        return fact != null && fact.isObject() && fact.path("supported").asBoolean(false);
    }

    private static boolean hasClarifyEndpoint(JsonNode endpoints) {
        for (JsonNode endpoint : endpoints) {
            String path = endpoint.path("path").asText("");
            if (path.startsWith("/v1/runs/") && path.endsWith("/clarify")) {
                return true;
            }
        }
        return false;
    }

    private static List<ModelOption> modelOptions(@Nullable JsonNode models) {
        List<ModelOption> options = new ArrayList<>();
        if (models == null) {
            return options;
        }
        for (JsonNode model : models.path("data")) {
            String id = BridgeRun.text(model, "id");
            if (id != null && !id.isBlank()) {
                options.add(new ModelOption(id, id, null));
            }
        }
        return options;
    }
}
