package dev.parley.chat.runtime;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowPublisherVerification;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK against {@link StreamPublisher}: a producer on its own thread, as an adapter's
 * reader thread would be. Runs on the JUnit Platform through the TestNG engine.
 */
public class StreamPublisherTckTest extends FlowPublisherVerification<Long> {
    private ExecutorService producers;

    public StreamPublisherTckTest() {
        super(new TestEnvironment(300));
    }

    @BeforeClass
    public void startProducers() {
        producers = Executors.newCachedThreadPool(r -> {
            Thread thread = new Thread(r, "tck-producer");
            thread.setDaemon(true);
            return thread;
        });
    }

    @AfterClass
    public void stopProducers() {
        producers.shutdownNow();
    }

    @Override
    public Flow.Publisher<Long> createFlowPublisher(long elements) {
        return StreamPublisher.create(16, emitter -> producers.execute(() -> {
            for (long i = 0; i < elements; i++) {
                if (!emitter.emit(i)) {
                    return;
                }
            }
            emitter.complete();
        }));
    }

    @Override
    public Flow.Publisher<Long> createFailedFlowPublisher() {
        return StreamPublisher.create(emitter -> emitter.fail(new RuntimeException("the runtime is down")));
    }
}
