package dev.parley.chat.agent;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.testing.ScriptedModel;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The default system prompt reaches the model on every run; a skill's prompt extends it. */
class SystemPromptTest extends AgentLoopFixture {
    private static final List<SkillOption> SKILLS = List.of(new SkillOption("pirate", "Pirate", "talks like one"));

    @Test
    void theDefaultPromptIsSentWithoutASkill() {
        ScriptedModel model = ScriptedModel.replying(reply().text("Hello."));
        try (ChatEngine engine = engine(model, b -> b.systemPrompt("You are Parley's help desk."))) {
            assertThat(runToEnd(engine, NewThread.empty(), "hi").status()).isEqualTo(RunStatus.SUCCEEDED);

            assertThat(model.requests().get(0).systemPrompt()).isEqualTo("You are Parley's help desk.");
        }
    }

    @Test
    void aSkillsPromptFollowsTheDefaultOne() {
        ScriptedModel model = ScriptedModel.replying(reply().text("Ahoy."));
        try (ChatEngine engine = engine(model, b -> b.systemPrompt("You are Parley's help desk.\n")
                .systemPrompts(SKILLS, skill -> "Speak like a pirate."))) {
            assertThat(runToEnd(engine, new NewThread(null, null, "pirate"), "hi").status())
                    .isEqualTo(RunStatus.SUCCEEDED);

            assertThat(model.requests().get(0).systemPrompt())
                    .isEqualTo("You are Parley's help desk.\n\nSpeak like a pirate.");
        }
    }

    @Test
    void withoutADefaultOnlyTheSkillsPromptIsSentAndWithNeitherNone() {
        ScriptedModel model = ScriptedModel.replying(reply().text("Ahoy."));
        try (ChatEngine engine = engine(model, b -> b.systemPrompt("  ")
                .systemPrompts(SKILLS, skill -> "Speak like a pirate."))) {
            runToEnd(engine, new NewThread(null, null, "pirate"), "hi");
            runToEnd(engine, NewThread.empty(), "hi");

            assertThat(model.requests()).extracting(ModelRequest::systemPrompt)
                    .containsExactly("Speak like a pirate.", null);
        }
    }
}
