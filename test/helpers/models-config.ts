/**
 * A config with models, plain aliases and pools, some of a provider that is off, and the models list
 * it gives (docs/interface.md, "Models and capabilities"): shared by the list and retrieve suites.
 */
import { expect } from "vitest";
import { testConfig } from "./harness.ts";

/** `openai` is off unless OPENAI_API_KEY is set: `smart` and `cloudy` go with it, and `spread` keeps two members. */
export const MODELS_CONFIG = testConfig(
  {
    echo: { plugin: "provider-echo", models: ["echo-1", "echo-2"] },
    other: { plugin: "provider-echo", models: ["big"] },
    openai: { plugin: "provider-openai", api_key: "${OPENAI_API_KEY:-}", requires_env: ["OPENAI_API_KEY"], models: ["gpt-4o"] },
  },
  {
    aliases: {
      fast: "echo/echo-1",
      smart: "openai/gpt-4o",
      spread: {
        loadbalance: [
          { model: "echo/echo-1", weight: 3 },
          { model: "openai/gpt-4o", weight: 2 },
          { model: "other/big", weight: 1 },
        ],
      },
      cloudy: { loadbalance: [{ model: "openai/gpt-4o" }] },
      quick: "other/big",
    },
  },
);

/** Every entry has these; `created` and `created_at` are the start-up time. */
const common = { object: "model", created: expect.any(Number), created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) };

/** The list of MODELS_CONFIG with `openai` off, in order. */
export const EXPECTED_MODELS = [
  { ...common, id: "echo/echo-1", owned_by: "echo", model_name: "echo-1", model_provider: "echo", modelmux_model_id: 1, modelmux_kind: "model" },
  { ...common, id: "echo/echo-2", owned_by: "echo", model_name: "echo-2", model_provider: "echo", modelmux_model_id: 2, modelmux_kind: "model" },
  { ...common, id: "other/big", owned_by: "other", model_name: "big", model_provider: "other", modelmux_model_id: 3, modelmux_kind: "model" },
  {
    ...common,
    id: "fast",
    owned_by: "echo",
    model_name: "echo-1",
    model_provider: "echo",
    modelmux_model_id: 4,
    modelmux_kind: "alias",
    modelmux_target: "echo/echo-1",
  },
  { ...common, id: "quick", owned_by: "other", model_name: "big", model_provider: "other", modelmux_model_id: 5, modelmux_kind: "alias", modelmux_target: "other/big" },
  {
    ...common,
    id: "spread",
    owned_by: "modelmux",
    model_name: "spread",
    model_provider: "modelmux",
    modelmux_model_id: 6,
    modelmux_kind: "pool",
    modelmux_members: [
      { model: "echo/echo-1", weight: 3 },
      { model: "other/big", weight: 1 },
    ],
  },
];
