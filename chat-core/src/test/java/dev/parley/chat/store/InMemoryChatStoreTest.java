package dev.parley.chat.store;

/** The contract suite on the in-memory store. */
class InMemoryChatStoreTest extends ChatStoreContract {
    @Override
    protected ChatStore createStore() {
        return new InMemoryChatStore();
    }
}
