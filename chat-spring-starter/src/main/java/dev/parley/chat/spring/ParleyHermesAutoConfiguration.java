package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.hermes.FeatureSetting;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesModel;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.hermes.HermesTransport;
import dev.parley.chat.hermes.ModelResolver;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.SkillResolver;
import dev.parley.chat.spring.internal.RunTracing;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import okhttp3.OkHttpClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The Hermes runtime, when {@code parley.hermes.base-url} is set: the Bridge protocol by default, or
 * Hermes Agent's own API server with {@code parley.hermes.transport=API_SERVER}. Models come from
 * {@code parley.hermes.models} (or a {@link ModelResolver} bean), skills from
 * {@code parley.hermes.skills-dir} (or a {@link SkillResolver} bean). A host's {@link RuntimeAdapter}
 * bean wins.
 */
@AutoConfiguration(before = ParleyAutoConfiguration.class)
@ConditionalOnClass(HermesRuntimeAdapter.class)
@ConditionalOnProperty(prefix = "parley.hermes", name = "base-url")
@EnableConfigurationProperties(ParleyProperties.class)
public class ParleyHermesAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(RuntimeAdapter.class)
    public HermesRuntimeAdapter hermesRuntimeAdapter(ParleyProperties properties,
            ObjectProvider<ModelResolver> modelResolver, ObjectProvider<SkillResolver> skillResolver,
            ObjectProvider<RunTracing> tracing) {
        ParleyProperties.Hermes hermes = properties.getHermes();
        HermesConfig.Builder config = HermesConfig.builder()
                .baseUrl(hermes.getBaseUrl())
                .transport(transport(hermes.getTransport()))
                .bearerToken(hermes.getToken())
                .connectTimeout(hermes.getConnectTimeout())
                .idleTimeout(hermes.getIdleTimeout())
                .defaultMaxIterations(hermes.getMaxIterations())
                .apiServerSessionHistory(setting("session-history", hermes.getApiServer().getSessionHistory()))
                .apiServerIdempotentStart(setting("idempotent-start", hermes.getApiServer().getIdempotentStart()))
                .apiServerClarify(setting("clarify", hermes.getApiServer().getClarify()))
                .apiServerApprovalTimeout(hermes.getApiServer().getApprovalTimeout())
                .apiServerInfoTtl(hermes.getApiServer().getInfoTtl())
                .bridgeAttachments(bridgeAttachments(hermes.getBridgeAttachmentTypes()))
                .modelResolver(modelResolver.getIfAvailable(() -> models(hermes.getModels())))
                .skillResolver(skillResolver.getIfAvailable(() -> hermes.getSkillsDir() == null
                        ? SkillResolver.none() : SkillResolver.directory(hermes.getSkillsDir())));
        tracing.ifAvailable(traced -> {
            config.taskDecorator(traced.taskDecorator());
            if (traced.httpInterceptor() != null) {
                config.httpClient(new OkHttpClient.Builder().addInterceptor(traced.httpInterceptor()).build());
            }
        });
        return new HermesRuntimeAdapter(config.build());
    }

    private static HermesTransport transport(String name) {
        String normalised = name.strip().toUpperCase(Locale.ROOT).replace('-', '_');
        try {
            return HermesTransport.valueOf(normalised);
        } catch (IllegalArgumentException e) {
            throw ChatException.configuration("parley.hermes.transport must be BRIDGE or API_SERVER, got '" + name + "'");
        }
    }

    private static AttachmentSupport bridgeAttachments(List<String> types) {
        Set<String> taken = types.stream().map(t -> t.strip().toLowerCase(Locale.ROOT)).filter(t -> !t.isEmpty())
                .collect(Collectors.toCollection(java.util.TreeSet::new));
        if (taken.isEmpty()) {
            return AttachmentSupport.NONE;
        }
        if (taken.equals(HermesConfig.BRIDGE_ATTACHMENTS.mediaTypes())) {
            return HermesConfig.BRIDGE_ATTACHMENTS;
        }
        return new AttachmentSupport(taken, "the Hermes Bridge is set to take " + String.join(", ", taken)
                + " (parley.hermes.bridge-attachment-types)");
    }

    private static FeatureSetting setting(String property, String value) {
        try {
            return FeatureSetting.valueOf(value.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw ChatException.configuration(
                    "parley.hermes.api-server." + property + " must be DETECT, ON or OFF, got '" + value + "'");
        }
    }

    private static ModelResolver models(List<ParleyProperties.Model> models) {
        if (models.isEmpty()) {
            return ModelResolver.passThrough();
        }
        return ModelResolver.of(models.stream()
                .map(m -> new HermesModel(m.getId(), m.getName(), m.getProvider(), m.getBaseUrl(), m.getApiKey()))
                .collect(Collectors.toList()));
    }
}
