package dev.relayfarm.services.stages;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;

/** Binds the stages' settings: their limits ({@code relayfarm.limits.*}) and their files' place ({@code relayfarm.work-dir}). */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({LimitsProperties.class, WorkDirProperties.class})
public class LimitsConfig {}
