package dev.parley.chat.engine;

import dev.parley.chat.ChatException;
import java.time.Duration;
import java.util.Objects;

/**
 * The engine's limits and tuning, with production defaults ({@link #defaults()}). Immutable; change a
 * value with its {@code with…} method. A value that is not positive, or a default page larger than the
 * largest, throws {@link ChatException} with {@code CONFIGURATION}.
 *
 * @param maxMessageLength the longest user message or clarify answer, in characters (default 100 000)
 * @param maxPageSize the largest page a list call returns (default 200)
 * @param defaultPageSize the page size when the caller gives none (default 50)
 * @param titleLength how many characters of the first user message make a thread's default title (30)
 * @param subscriberLagLimit how many events a live subscriber may fall behind before it is cut off with
 *     its cursor (default 10 000)
 * @param eventFlushInterval how often the batch writer stores new events (default 20 ms)
 * @param eventFlushBatchSize a flush starts early once this many events wait (default 512)
 * @param maxBatchEvents the most events one store transaction of the batch writer holds (default 4 096): a
 *     store that fell behind catches up in transactions of this size, and a flush that must finish before
 *     an answer or a run's end waits for its own run's transactions only
 * @param maxBatchBytes the most bytes one store transaction of the batch writer holds (default 4 MiB),
 *     estimated from the events' and messages' text; a single event or message larger than this goes in a
 *     transaction of its own
 * @param messageFlushInterval how often a running run's messages are stored (default 1 s); events are
 *     the exact record, messages are also stored at every clarify and at the end of the run
 * @param maxPendingEvents a run's stream is held back while this many events wait for the store
 *     (default 100 000)
 * @param cancelGracePeriod how long a runtime may take to confirm a cancel before the engine ends the run
 *     itself (default 10 s)
 * @param replayPageSize how many events a replay reads from the store at once (default 512)
 * @param clientToolTimeout how long a tool the person's browser runs may take before its call fails as
 *     timed out (default 10 min); the page runs it as soon as it sees the call, so this is mostly the time a
 *     person may be away
 * @param historyMessages the most user and assistant messages a run's {@code ConversationHistory} holds,
 *     newest kept (default 200)
 * @param historyCharacters the most characters of text, tool arguments and results it holds, newest kept
 *     (default 400 000)
 * @param maxStepsPerAnswer the most steps (thinking, tool calls and results, todos, inputs, statuses) of one
 *     answer that a thread view shows, a run's {@code ConversationHistory} holds and a compacted run's
 *     replay keeps, newest kept (default 200): a view says how many it leaves out
 *     ({@link ThreadView#omittedSteps()}); an export always holds every step, read this many at a time
 */
public record EngineLimits(
        int maxMessageLength,
        int maxPageSize,
        int defaultPageSize,
        int titleLength,
        int subscriberLagLimit,
        Duration eventFlushInterval,
        int eventFlushBatchSize,
        int maxBatchEvents,
        int maxBatchBytes,
        Duration messageFlushInterval,
        int maxPendingEvents,
        Duration cancelGracePeriod,
        int replayPageSize,
        Duration clientToolTimeout,
        int historyMessages,
        int historyCharacters,
        int maxStepsPerAnswer) {

    public EngineLimits {
        positive(maxMessageLength, "maxMessageLength");
        positive(maxPageSize, "maxPageSize");
        positive(defaultPageSize, "defaultPageSize");
        positive(titleLength, "titleLength");
        positive(subscriberLagLimit, "subscriberLagLimit");
        positive(eventFlushBatchSize, "eventFlushBatchSize");
        positive(maxBatchEvents, "maxBatchEvents");
        positive(maxBatchBytes, "maxBatchBytes");
        positive(maxPendingEvents, "maxPendingEvents");
        positive(replayPageSize, "replayPageSize");
        positive(eventFlushInterval, "eventFlushInterval");
        positive(messageFlushInterval, "messageFlushInterval");
        positive(cancelGracePeriod, "cancelGracePeriod");
        positive(clientToolTimeout, "clientToolTimeout");
        positive(historyMessages, "historyMessages");
        positive(historyCharacters, "historyCharacters");
        positive(maxStepsPerAnswer, "maxStepsPerAnswer");
        if (defaultPageSize > maxPageSize) {
            throw ChatException.configuration("defaultPageSize must not exceed maxPageSize, got " + defaultPageSize
                    + " > " + maxPageSize);
        }
    }

    public static EngineLimits defaults() {
        return new EngineLimits(100_000, 200, 50, 30, 10_000, Duration.ofMillis(20), 512, 4_096, 4 << 20,
                Duration.ofSeconds(1), 100_000, Duration.ofSeconds(10), 512, Duration.ofMinutes(10), 200, 400_000,
                200);
    }

    public EngineLimits withMaxMessageLength(int value) {
        return new EngineLimits(value, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                maxPendingEvents, cancelGracePeriod, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    public EngineLimits withSubscriberLagLimit(int value) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, value,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                maxPendingEvents, cancelGracePeriod, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    public EngineLimits withEventFlush(Duration interval, int batchSize) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                interval, batchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                maxPendingEvents, cancelGracePeriod, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    /** The caps of one store transaction of the batch writer: events, and estimated bytes. */
    public EngineLimits withBatchCaps(int events, int bytes) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, events, bytes, messageFlushInterval,
                maxPendingEvents, cancelGracePeriod, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    public EngineLimits withMessageFlushInterval(Duration value) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, value,
                maxPendingEvents, cancelGracePeriod, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    public EngineLimits withMaxPendingEvents(int value) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                value, cancelGracePeriod, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    public EngineLimits withCancelGracePeriod(Duration value) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                maxPendingEvents, value, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    public EngineLimits withPageSizes(int defaultSize, int maxSize) {
        return new EngineLimits(maxMessageLength, maxSize, defaultSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                maxPendingEvents, cancelGracePeriod, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    public EngineLimits withClientToolTimeout(Duration value) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                maxPendingEvents, cancelGracePeriod, replayPageSize, value,
                historyMessages, historyCharacters, maxStepsPerAnswer);
    }

    public EngineLimits withHistory(int messages, int characters) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                maxPendingEvents, cancelGracePeriod, replayPageSize, clientToolTimeout, messages, characters,
                maxStepsPerAnswer);
    }

    /** The most steps of one answer a view shows, a history holds and a compacted replay keeps, newest kept. */
    public EngineLimits withMaxStepsPerAnswer(int value) {
        return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize, titleLength, subscriberLagLimit,
                eventFlushInterval, eventFlushBatchSize, maxBatchEvents, maxBatchBytes, messageFlushInterval,
                maxPendingEvents, cancelGracePeriod, replayPageSize, clientToolTimeout,
                historyMessages, historyCharacters, value);
    }

    private static void positive(int value, String name) {
        if (value < 1) {
            throw ChatException.configuration(name + " must be positive, got " + value);
        }
    }

    private static void positive(Duration value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isZero() || value.isNegative()) {
            throw ChatException.configuration(name + " must be positive, got " + value);
        }
    }
}
