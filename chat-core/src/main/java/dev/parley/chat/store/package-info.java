/**
 * The store SPI ({@link dev.parley.chat.store.ChatStore}) and its in-memory implementation. A durable
 * implementation lives in {@code chat-store-jdbi}; every implementation must pass the contract suite
 * published in chat-core's test-jar ({@code dev.parley.chat.store.ChatStoreContract}).
 */
@NullMarked
package dev.parley.chat.store;

import org.jspecify.annotations.NullMarked;
