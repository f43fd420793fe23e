package dev.parley.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RunRequest;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The reference Bridge over a real Hermes Agent: the shared checks, and what only the Bridge carries. */
class RealHermesBridgeTest extends RealHermesChecks {
    private static RealHermes hermes;
    private static HermesRuntimeAdapter adapter;

    @BeforeAll
    static void connect(RealHermes shared) {
        hermes = shared;
        adapter = shared.bridgeAdapter();
    }

    @AfterAll
    static void disconnect() throws Exception {
        if (adapter != null) {
            adapter.close();
        }
        if (hermes != null) {
            assertThat(hermes.bridge().stdout()).as("the Bridge writes nothing to stdout").isEmpty();
            assertThat(hermes.bridge().log()).doesNotContain(BridgeProcess.TOKEN);
        }
    }

    @Override
    RealHermes hermes() {
        return hermes;
    }

    @Override
    HermesRuntimeAdapter adapter() {
        return adapter;
    }

    @Test
    void aClarifyAnswered() throws Exception {
        String m = marker("clarify");
        hermes.model().script(m, ScriptedModel.call("clarify", "{\"question\": \"Which city?\", \"choices\": [\"Paris\", \"Rome\"]}"),
                ScriptedModel.say("Going where you said."));
        RunRequest request = request(m + " pick a city");
        Events events = Events.of(adapter.generateResponse(request));

        AgentStreamEvent.InputRequested asked = events.await(AgentStreamEvent.InputRequested.class);
        assertThat(asked.request()).isEqualTo(new ClarifyRequest("Which city?", List.of("Paris", "Rome"), false));
        adapter.answerClarify(new ClarifyReply(request.runId(), asked.inputId(), List.of("Rome")));

        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(events.await(AgentStreamEvent.ToolCallResult.class).result()).contains("Rome");
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("Going where you said.");
        assertThat(toolResultSent(m)).as("the answer Hermes handed the model").contains("Rome");
    }

    /**
     * A PNG and a text file through the engine: the model gets the image as an {@code image_url} data URL on the
     * turn's message, whose text names both files; the text file lies in the conversation's working directory, where
     * Hermes' own {@code read_file} finds it by its bare name.
     */
    @Test
    void anImageReachesTheModelAndAFileLandsWhereHermesToolsReadIt() throws Exception {
        String m = marker("files");
        byte[] png = ReferenceBridgeAttachmentsTest.PNG;
        byte[] notes = ("The secret word is " + m + "-heron.\n").getBytes(StandardCharsets.UTF_8);
        hermes.model().script(m, ScriptedModel.call("read_file", "{\"path\": \"notes.txt\"}"),
                ScriptedModel.say("Read them."));
        try (ChatEngine engine = engine()) {
            String thread = engine.createThread("alice", NewThread.empty()).id();
            List<String> files = List.of(
                    engine.attachments().upload("alice", thread, "cat.png", null, new ByteArrayInputStream(png)).id(),
                    engine.attachments().upload("alice", thread, "notes.txt", null, new ByteArrayInputStream(notes)).id());
            RunTicket ticket = awaitSucceeded(engine, engine.startRun("alice", thread,
                    StartRun.of(m + " look at these").withAttachments(files)));
            assertThat(answer(engine, ticket)).isEqualTo("Read them.");
        }

        List<Path> saved = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(hermes.bridgeWorkRoot())) {
            for (Path file : walk.filter(p -> p.getFileName().toString().equals("notes.txt")).toList()) {
                if (Files.readString(file, StandardCharsets.UTF_8).contains(m)) {
                    saved.add(file);
                }
            }
        }
        assertThat(saved).as("the text file in the conversation's working directory").hasSize(1);
        assertThat(saved.get(0).resolveSibling("cat.png")).hasBinaryContent(png);

        JsonNode first = hermes.model().requestsFor(m).get(0);
        JsonNode question = null;
        for (JsonNode message : first.path("messages")) {
            if (message.path("role").asText().equals("user")) {
                question = message.path("content");
            }
        }
        assertThat(question.isArray()).as("the question went to the model as parts: %s", question).isTrue();
        List<String> images = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (JsonNode part : question) {
            if (part.path("type").asText().equals("image_url")) {
                images.add(part.path("image_url").path("url").asText());
            } else {
                text.append(part.path("text").asText());
            }
        }
        assertThat(images).containsExactly("data:image/png;base64," + Base64.getEncoder().encodeToString(png));
        assertThat(text.toString()).contains(m + " look at these")
                .contains("[image: cat.png (image/png, " + png.length + " bytes), saved as " + saved.get(0).resolveSibling("cat.png") + "]")
                .contains("[file: notes.txt (text/plain, " + notes.length + " bytes), saved as " + saved.get(0) + "]");
        assertThat(toolResultSent(m)).as("what Hermes' read_file gave the model").contains(m + "-heron");
    }

    @Test
    void thinkingAndATodoList() throws Exception {
        String m = marker("todo");
        hermes.model().script(m, ScriptedModel.thinkThenCall("First I plan the work.", "todo",
                        "{\"todos\": [{\"id\": \"1\", \"content\": \"Look around\", \"status\": \"completed\"},"
                                + " {\"id\": \"2\", \"content\": \"Answer\", \"status\": \"in_progress\"}]}"),
                ScriptedModel.think("Now I answer.", "All planned."));
        RunRequest request = request(m + " plan it");
        Events events = Events.of(adapter.generateResponse(request));

        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        String thinking = events.of(AgentStreamEvent.ThinkingDelta.class).stream()
                .map(AgentStreamEvent.ThinkingDelta::delta).collect(Collectors.joining());
        assertThat(thinking).contains("First I plan the work.").contains("Now I answer.");
        assertThat(events.await(AgentStreamEvent.TodosUpdated.class).items()).containsExactly(
                new TodoItem("1", "Look around", TodoStatus.COMPLETED, null),
                new TodoItem("2", "Answer", TodoStatus.IN_PROGRESS, null));
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("All planned.");
    }
}
