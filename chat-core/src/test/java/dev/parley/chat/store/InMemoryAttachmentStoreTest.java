package dev.parley.chat.store;

/** The attachment contract on the in-memory store. */
class InMemoryAttachmentStoreTest extends AttachmentStoreContract {
    @Override
    protected ChatStore createStore() {
        return new InMemoryChatStore();
    }
}
