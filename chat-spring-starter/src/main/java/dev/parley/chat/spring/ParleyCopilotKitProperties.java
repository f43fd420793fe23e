package dev.parley.chat.spring;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The CopilotKit runtime endpoint ({@code parley.web.copilotkit.*}): CopilotKit's React front end talks to it
 * directly, with no Node runtime in between (see the starter's README, "CopilotKit without a Node runtime").
 */
@ConfigurationProperties(prefix = "parley.web.copilotkit")
public class ParleyCopilotKitProperties {
    /**
     * Whether to expose the endpoint. It is on wherever the AG-UI endpoint is ({@code parley.web.enabled} and
     * {@code parley.web.agui.enabled} switch it off with them).
     */
    private boolean enabled = true;
    /** Its path under {@code parley.web.base-path}: the {@code runtimeUrl} a page gives CopilotKit. */
    private String path = "/copilotkit";
    /** The description of the one agent, {@code default}, that {@code GET /info} lists. */
    private String agentDescription = "An agent on Parley: durable threads, live runs, questions and approvals.";
    /**
     * Pages on other origins (exact origins, such as {@code https://app.example.com}) that may call the endpoint
     * from a browser: they get CORS answers, credentials included, and their POSTs pass the Origin rule. No
     * wildcards; empty (the default), no page on another origin may call it.
     */
    private List<String> allowedOrigins = new ArrayList<>();
    /**
     * Whether the endpoint takes the owner from the header of {@code parley.owner.mode=HEADER}. Off by
     * default, and then every request to the endpoint is refused in that mode: with no Node runtime in between
     * the page calls the endpoint itself, and a header any page can set is not a person's identity. Switch it
     * on only when a proxy in front of the application authenticates the person and sets the header.
     */
    private boolean trustOwnerHeader;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    public String getAgentDescription() {
        return agentDescription;
    }

    public void setAgentDescription(String agentDescription) {
        this.agentDescription = agentDescription;
    }

    public List<String> getAllowedOrigins() {
        return allowedOrigins;
    }

    public void setAllowedOrigins(List<String> allowedOrigins) {
        this.allowedOrigins = allowedOrigins;
    }

    public boolean isTrustOwnerHeader() {
        return trustOwnerHeader;
    }

    public void setTrustOwnerHeader(boolean trustOwnerHeader) {
        this.trustOwnerHeader = trustOwnerHeader;
    }
}
