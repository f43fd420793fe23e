package dev.parley.chat.spring;

import java.util.Map;

/**
 * What of the context a client sends with a message may reach the runtime: the REST {@code context} field,
 * and AG-UI's {@code context[]} with its {@code system} and {@code developer} messages. The person's browser
 * (or any caller of the endpoints) chose that text, so the runtime gets what this filter keeps under the key
 * {@code sentByClient}, apart from context the application gives it. Define a bean of this type to keep only
 * what the application expects; without one everything sent is kept ({@code parley.web.accept-client-context=false}
 * drops it all).
 *
 * <p>Called on the request's thread before anything is stored. The result is stored with the run and
 * compared when the same message is sent again, so the same input must give the same result.
 */
@FunctionalInterface
public interface ClientContextFilter {
    /**
     * @param ownerId the caller
     * @param sent what the client sent: the REST {@code context} object as is; for AG-UI
     *     {@code {"agui": {"context": [...]}}}, the list holding its {@code context[]} entries and its system and
     *     developer messages as {@code {role, content}}
     * @return what the runtime may see (labelled as sent by the client); empty or null to drop it all
     */
    Map<String, Object> filter(String ownerId, Map<String, Object> sent);
}
