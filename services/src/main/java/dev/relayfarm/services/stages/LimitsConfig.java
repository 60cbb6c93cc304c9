package dev.relayfarm.services.stages;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;

/** Binds the stages' limits ({@code relayfarm.limits.*}). */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(LimitsProperties.class)
public class LimitsConfig {}
