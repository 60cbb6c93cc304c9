package dev.relayfarm.services.kit;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;

/** Binds the kit's settings ({@code relayfarm.stage.*}). */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(StageSettings.class)
public class StageKitConfig {}
