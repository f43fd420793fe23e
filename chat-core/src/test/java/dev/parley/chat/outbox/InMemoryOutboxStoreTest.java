package dev.parley.chat.outbox;

import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;

/** The outbox contract on the in-memory store. */
class InMemoryOutboxStoreTest extends OutboxStoreContract {
    @Override
    protected ChatStore createStore() {
        return new InMemoryChatStore();
    }
}
