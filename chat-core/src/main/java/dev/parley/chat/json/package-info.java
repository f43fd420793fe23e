/**
 * The JSON codec for every model and event type: {@link dev.parley.chat.json.ChatJson}. The wire format
 * is the one the store, the SSE endpoint and the browser client share.
 */
@NullMarked
package dev.parley.chat.json;

import org.jspecify.annotations.NullMarked;
