package dev.parley.chat.webhooks;

import dev.parley.chat.ChatException;
import dev.parley.chat.outbox.OutboxEventType;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import okhttp3.HttpUrl;

/**
 * Where webhooks go: a name (the outbox's destination, stored with each pending delivery), an HTTPS URL, the
 * signing secret and the events it wants. Immutable.
 *
 * <p>The URL must be {@code https}; plain {@code http} is taken only for a loopback host ({@code localhost},
 * {@code 127.0.0.1}, {@code [::1]}), for tests and a receiver on the same machine.
 *
 * @param name unique among the endpoints, 1 to 200 characters; keep it stable: deliveries pending for a name no
 *     endpoint has any more fail
 * @param events at least one
 */
public record WebhookEndpoint(String name, String url, WebhookSecret secret, Set<OutboxEventType> events) {

    /**
     * @throws ChatException CONFIGURATION for a blank or too long name, a missing or malformed URL, an
     *     {@code http} URL to a host that is not loopback, a missing secret or no events; each message names the
     *     endpoint and never shows the secret
     */
    public WebhookEndpoint {
        if (name == null || name.isBlank() || name.length() > 200) {
            throw ChatException.configuration("a webhook endpoint needs a name of 1 to 200 characters");
        }
        if (url == null || url.isBlank()) {
            throw ChatException.configuration("webhook endpoint '" + name + "' has no url");
        }
        HttpUrl parsed = HttpUrl.parse(url);
        if (parsed == null) {
            throw ChatException.configuration("webhook endpoint '" + name + "': the url is not an http(s) URL");
        }
        if (!parsed.isHttps() && !isLoopback(parsed.host())) {
            throw ChatException.configuration("webhook endpoint '" + name + "': the url must be https (plain http is"
                    + " taken only for localhost), got " + parsed.scheme() + "://" + parsed.host());
        }
        if (secret == null) {
            throw ChatException.configuration("webhook endpoint '" + name + "' has no secret (whsec_…)");
        }
        if (events == null || events.isEmpty()) {
            throw ChatException.configuration("webhook endpoint '" + name + "' wants no events; name at least one of "
                    + "run.succeeded, run.failed, run.cancelled, run.interrupted, input.requested");
        }
        events = Set.copyOf(EnumSet.copyOf(events));
    }

    /**
     * An endpoint from text, as configuration gives it.
     *
     * @param secret {@code whsec_…} ({@link WebhookSecret#parse})
     * @param events wire names ({@code run.succeeded} …); empty for every event
     * @throws ChatException CONFIGURATION for anything the constructor refuses, a bad secret or an unknown event
     */
    public static WebhookEndpoint of(String name, String url, String secret, Set<String> events) {
        Set<OutboxEventType> types = EnumSet.noneOf(OutboxEventType.class);
        if (events == null || events.isEmpty()) {
            types = EnumSet.allOf(OutboxEventType.class);
        } else {
            for (String event : events) {
                try {
                    types.add(OutboxEventType.ofWireName(event == null ? "" : event.trim()));
                } catch (ChatException e) {
                    throw ChatException.configuration("webhook endpoint '" + name + "': " + e.getMessage());
                }
            }
        }
        WebhookSecret parsed;
        try {
            parsed = WebhookSecret.parse(secret);
        } catch (ChatException e) {
            throw ChatException.configuration("webhook endpoint '" + name + "': " + e.getMessage());
        }
        return new WebhookEndpoint(name, url, parsed, types);
    }

    /** The URL without its query and fragment, as logs show it (a query may carry a token). */
    public String safeUrl() {
        HttpUrl parsed = Objects.requireNonNull(HttpUrl.parse(url));
        return parsed.newBuilder().query(null).fragment(null).username("").password("").build().toString();
    }

    private static boolean isLoopback(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        return h.equals("localhost") || h.equals("127.0.0.1") || h.equals("::1") || h.equals("[::1]");
    }
}
