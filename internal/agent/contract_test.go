package agent

// The LLM-provider contract suite: real chat-completions responses recorded
// from OpenAI, Groq, Mistral, Cerebras, Crusoe and Gemini's
// OpenAI-compatible endpoint (../shared/data/llm-responses), and
// project-made bodies for the failure classes the recordings lack, are
// served by a local replay server to the arena's three model uses — the
// trading decider, the tool-calling forecaster and the oracle resolver —
// through the real llm.Client. Every response ends as a parsed answer or a
// classified failure; the tables below state which, per response and use.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/shareddata"
)

// Use names one of the arena's model uses.
const (
	useDecider    = "decider"
	useForecaster = "forecaster"
	useOracle     = "oracle"
)

var uses = []string{useDecider, useForecaster, useOracle}

// Kinds of recorded response, each with its expected outcome per use.
const (
	kindText   = "text"   // a completed answer in the recording's own words, not in our format
	kindTools  = "tools"  // tool calls naming the recording's tools (none of ours)
	kindStream = "stream" // an SSE stream sent to a client that did not ask for one
)

// expectByKind is the outcome per use of each kind of response: a parsed
// answer, or the failure class it ends in. A text answer that is not ours
// is unparseable for every use (the decider holds by system default, the
// forecaster submits nothing, the oracle votes nothing); a stream is a
// body the client cannot read as a completion; tool calls to tools
// the forecaster does not have are answered with an error and the
// conversation goes on until its budget of steps is spent; an error
// response is its class for every use.
func expectByKind(kind string) map[string]string {
	switch kind {
	case kindText:
		return map[string]string{useDecider: answerNotOurs, useForecaster: answerNotOurs, useOracle: answerNotOurs}
	case kindTools:
		return map[string]string{useDecider: answerNotOurs, useForecaster: "unknown_tool", useOracle: answerNotOurs}
	case kindStream:
		return map[string]string{useDecider: string(llm.ClassUnparseable), useForecaster: string(llm.ClassUnparseable), useOracle: string(llm.ClassUnparseable)}
	}
	return map[string]string{useDecider: kind, useForecaster: kind, useOracle: kind}
}

// answerNotOurs is the outcome of a completed answer whose text is not in
// the use's format: unparseable as an answer, though the body parsed.
const answerNotOurs = "unparseable_answer"

// recordedKinds states, per recorded chat-completions response (cassette
// and interaction number), what kind it is. Every recorded response must
// be listed.
var recordedKinds = map[string]string{
	"test_dbos/test_complex_agent_run_in_workflow.yaml#0":                                    kindStream,
	"test_dbos/test_complex_agent_run_in_workflow.yaml#1":                                    kindStream,
	"test_dbos/test_complex_agent_run_in_workflow.yaml#2":                                    kindStream,
	"test_dbos/test_complex_agent_run_sequential_tool.yaml#0":                                kindStream,
	"test_dbos/test_complex_agent_run_sequential_tool.yaml#1":                                kindStream,
	"test_dbos/test_complex_agent_run_sequential_tool.yaml#2":                                kindStream,
	"test_dbos/test_dbos_agent_iter.yaml#0":                                                  kindStream,
	"test_dbos/test_dbos_agent_iter_in_workflow.yaml#0":                                      kindStream,
	"test_dbos/test_dbos_agent_override_deps_in_workflow.yaml#0":                             kindText,
	"test_dbos/test_dbos_agent_override_tools_in_workflow.yaml#0":                            kindText,
	"test_dbos/test_dbos_agent_run.yaml#0":                                                   kindText,
	"test_dbos/test_dbos_agent_run_in_workflow_with_toolsets.yaml#0":                         kindText,
	"test_dbos/test_dbos_agent_run_stream.yaml#0":                                            kindStream,
	"test_dbos/test_dbos_agent_run_sync.yaml#0":                                              kindText,
	"test_dbos/test_dbos_agent_run_sync_in_workflow.yaml#0":                                  kindText,
	"test_dbos/test_dbos_agent_with_hitl_tool.yaml#0":                                        kindTools,
	"test_dbos/test_dbos_agent_with_hitl_tool.yaml#1":                                        kindText,
	"test_dbos/test_dbos_agent_with_hitl_tool_sync.yaml#0":                                   kindTools,
	"test_dbos/test_dbos_agent_with_hitl_tool_sync.yaml#1":                                   kindText,
	"test_dbos/test_dbos_agent_with_model_retry.yaml#0":                                      kindTools,
	"test_dbos/test_dbos_agent_with_model_retry.yaml#1":                                      kindTools,
	"test_dbos/test_dbos_agent_with_model_retry.yaml#2":                                      kindText,
	"test_dbos/test_dbos_agent_with_unserializable_deps_type.yaml#0":                         kindTools,
	"test_dbos/test_dbos_model_stream_direct.yaml#0":                                         kindStream,
	"test_dbos/test_mcp_tools_not_cached_when_disabled.yaml#0":                               kindStream,
	"test_dbos/test_mcp_tools_not_cached_when_disabled.yaml#1":                               kindStream,
	"test_dbos/test_mcp_tools_not_cached_when_disabled.yaml#2":                               kindStream,
	"test_dbos/test_multiple_agents.yaml#0":                                                  kindText,
	"test_dbos/test_multiple_agents.yaml#1":                                                  kindStream,
	"test_dbos/test_multiple_agents.yaml#2":                                                  kindStream,
	"test_dbos/test_multiple_agents.yaml#3":                                                  kindStream,
	"test_dbos/test_simple_agent_run_in_workflow.yaml#0":                                     kindText,
	"test_prefect/test_complex_agent_run_in_flow.yaml#0":                                     kindStream,
	"test_prefect/test_complex_agent_run_in_flow.yaml#1":                                     kindStream,
	"test_prefect/test_complex_agent_run_in_flow.yaml#2":                                     kindStream,
	"test_prefect/test_iter_in_flow.yaml#0":                                                  kindStream,
	"test_prefect/test_multiple_agents.yaml#0":                                               kindText,
	"test_prefect/test_multiple_agents.yaml#1":                                               kindStream,
	"test_prefect/test_multiple_agents.yaml#2":                                               kindStream,
	"test_prefect/test_multiple_agents.yaml#3":                                               kindStream,
	"test_prefect/test_prefect_agent_iter.yaml#0":                                            kindStream,
	"test_prefect/test_prefect_agent_override_deps.yaml#0":                                   kindText,
	"test_prefect/test_prefect_agent_override_tools.yaml#0":                                  kindText,
	"test_prefect/test_prefect_agent_override_toolsets.yaml#0":                               kindText,
	"test_prefect/test_prefect_agent_run.yaml#0":                                             kindText,
	"test_prefect/test_prefect_agent_run_stream.yaml#0":                                      kindStream,
	"test_prefect/test_prefect_agent_run_stream_events.yaml#0":                               kindStream,
	"test_prefect/test_prefect_agent_run_sync.yaml#0":                                        kindText,
	"test_prefect/test_prefect_agent_with_hitl_tool.yaml#0":                                  kindTools,
	"test_prefect/test_prefect_agent_with_hitl_tool.yaml#1":                                  kindText,
	"test_prefect/test_prefect_agent_with_hitl_tool_sync.yaml#0":                             kindTools,
	"test_prefect/test_prefect_agent_with_hitl_tool_sync.yaml#1":                             kindText,
	"test_prefect/test_prefect_agent_with_model_retry.yaml#0":                                kindTools,
	"test_prefect/test_prefect_agent_with_model_retry.yaml#1":                                kindTools,
	"test_prefect/test_prefect_agent_with_model_retry.yaml#2":                                kindText,
	"test_prefect/test_run_stream_in_flow.yaml#0":                                            kindStream,
	"test_prefect/test_run_sync_in_flow.yaml#0":                                              kindText,
	"test_prefect/test_simple_agent_run_in_flow.yaml#0":                                      kindText,
	"test_temporal/test_complex_agent_run.yaml#0":                                            kindStream,
	"test_temporal/test_complex_agent_run.yaml#1":                                            kindStream,
	"test_temporal/test_complex_agent_run.yaml#2":                                            kindStream,
	"test_temporal/test_complex_agent_run_in_workflow.yaml#0":                                kindStream,
	"test_temporal/test_complex_agent_run_in_workflow.yaml#1":                                kindStream,
	"test_temporal/test_complex_agent_run_in_workflow.yaml#2":                                kindStream,
	"test_temporal/test_durability_agent_with_model_retry.yaml#0":                            kindTools,
	"test_temporal/test_durability_agent_with_model_retry.yaml#1":                            kindTools,
	"test_temporal/test_durability_agent_with_model_retry.yaml#2":                            kindText,
	"test_temporal/test_durability_complex_agent_logfire_span_tree.yaml#0":                   kindStream,
	"test_temporal/test_durability_complex_agent_logfire_span_tree.yaml#1":                   kindStream,
	"test_temporal/test_durability_complex_agent_logfire_span_tree.yaml#2":                   kindStream,
	"test_temporal/test_mcp_tools_cached_across_activities.yaml#0":                           kindStream,
	"test_temporal/test_mcp_tools_cached_across_activities.yaml#1":                           kindStream,
	"test_temporal/test_mcp_tools_cached_across_activities.yaml#2":                           kindStream,
	"test_temporal/test_mcptoolset_dynamic_toolset_in_workflow.yaml#3":                       kindTools,
	"test_temporal/test_mcptoolset_dynamic_toolset_in_workflow.yaml#11":                      kindText,
	"test_temporal/test_mcptoolset_in_temporal_workflow.yaml#3":                              kindTools,
	"test_temporal/test_mcptoolset_in_temporal_workflow.yaml#8":                              kindText,
	"test_temporal/test_multiple_agents.yaml#0":                                              kindText,
	"test_temporal/test_multiple_agents.yaml#1":                                              kindStream,
	"test_temporal/test_multiple_agents.yaml#2":                                              kindStream,
	"test_temporal/test_multiple_agents.yaml#3":                                              kindStream,
	"test_temporal/test_passing_agents_through_workflow.yaml#0":                              kindText,
	"test_temporal/test_passing_agents_through_workflow_without_pydantic_ai_workflow.yaml#0": kindText,
	"test_temporal/test_simple_agent_run_in_workflow.yaml#0":                                 kindText,
	"test_temporal/test_temporal_agent_iter.yaml#0":                                          kindStream,
	"test_temporal/test_temporal_agent_override_deps_in_workflow.yaml#0":                     kindText,
	"test_temporal/test_temporal_agent_run.yaml#0":                                           kindText,
	"test_temporal/test_temporal_agent_run_stream.yaml#0":                                    kindStream,
	"test_temporal/test_temporal_agent_run_stream_events.yaml#0":                             kindStream,
	"test_temporal/test_temporal_agent_run_sync.yaml#0":                                      kindText,
	"test_temporal/test_temporal_agent_sync_tool_activity_disabled.yaml#0":                   kindTools,
	"test_temporal/test_temporal_agent_with_hitl_tool.yaml#0":                                kindTools,
	"test_temporal/test_temporal_agent_with_hitl_tool.yaml#1":                                kindText,
	"test_temporal/test_temporal_agent_with_model_retry.yaml#0":                              kindTools,
	"test_temporal/test_temporal_agent_with_model_retry.yaml#1":                              kindTools,
	"test_temporal/test_temporal_agent_with_model_retry.yaml#2":                              kindText,
	"test_temporal/test_temporal_agent_with_sync_history_processor.yaml#0":                   kindText,
	"test_temporal/test_temporal_agent_with_sync_instructions.yaml#0":                        kindText,
	"test_temporal/test_temporal_agent_with_unserializable_deps_type.yaml#0":                 kindTools,
	"test_cerebras/test_cerebras_disable_reasoning_setting.yaml#0":                           kindText,
	"test_cerebras/test_cerebras_model_simple.yaml#0":                                        kindText,
	"test_cerebras/test_cerebras_thinking_part_survives_multiturn.yaml#0":                    kindText,
	"test_cerebras/test_cerebras_thinking_part_survives_multiturn.yaml#1":                    kindText,
	"test_cerebras/test_cerebras_zai_reasoning_replayed_as_think_tags.yaml#0":                kindText,
	"test_cerebras/test_cerebras_zai_reasoning_replayed_as_think_tags.yaml#1":                kindText,
	"test_crusoe/test_crusoe_model_simple.yaml#0":                                            kindText,
	"test_crusoe/test_crusoe_model_streaming.yaml#0":                                         kindStream,
	"test_crusoe/test_crusoe_native_output.yaml#0":                                           kindText,
	"test_crusoe/test_crusoe_tool_calling.yaml#0":                                            kindTools,
	"test_crusoe/test_crusoe_tool_calling.yaml#1":                                            kindText,
	"test_groq/test_extra_headers.yaml#0":                                                    kindText,
	"test_groq/test_groq_model_instructions.yaml#0":                                          kindText,
	"test_groq/test_groq_model_thinking_part.yaml#0":                                         kindText,
	"test_groq/test_groq_model_thinking_part.yaml#1":                                         kindText,
	"test_groq/test_groq_model_thinking_part_iter.yaml#0":                                    kindStream,
	"test_groq/test_groq_model_thinking_part_iter.yaml#1":                                    kindStream,
	"test_groq/test_groq_model_web_search_tool.yaml#0":                                       kindText,
	"test_groq/test_groq_model_web_search_tool_stream.yaml#0":                                kindStream,
	"test_groq/test_groq_native_output.yaml#0":                                               kindText,
	"test_groq/test_groq_prompted_output.yaml#0":                                             kindText,
	"test_groq/test_groq_web_search_tool_domain_filters.yaml#0":                              kindText,
	"test_groq/test_image_as_binary_content_input.yaml#0":                                    kindText,
	"test_groq/test_image_as_binary_content_tool_response.yaml#0":                            kindTools,
	"test_groq/test_image_as_binary_content_tool_response.yaml#1":                            kindText,
	"test_groq/test_image_detail_vendor_metadata.yaml#0":                                     kindText,
	"test_groq/test_image_url_input.yaml#0":                                                  kindText,
	"test_groq/test_tool_regular_error.yaml#0":                                               "unknown_model",
	"test_groq/test_tool_use_failed_error.yaml#0":                                            "tool_use_failed",
	"test_groq/test_tool_use_failed_error.yaml#1":                                            kindTools,
	"test_groq/test_tool_use_failed_error.yaml#2":                                            kindText,
	"test_groq/test_tool_use_failed_error_streaming.yaml#0":                                  kindStream,
	"test_groq/test_tool_use_failed_error_streaming.yaml#1":                                  kindStream,
	"test_groq/test_tool_use_failed_error_streaming.yaml#2":                                  kindStream,
	"test_groq/test_tool_use_failed_error_streaming_with_text.yaml#0":                        kindStream,
	"test_groq/test_tool_use_failed_error_streaming_with_text.yaml#1":                        kindStream,
	"test_groq/test_tool_use_failed_error_with_text.yaml#0":                                  "tool_use_failed",
	"test_groq/test_tool_use_failed_error_with_text.yaml#1":                                  kindTools,
	"test_mistral/test_image_as_binary_content_tool_response.yaml#0":                         kindTools,
	"test_mistral/test_image_as_binary_content_tool_response.yaml#1":                         kindText,
	"test_mistral/test_mistral_forwards_penalties.yaml#0":                                    kindText,
	"test_mistral/test_mistral_history_uses_prompt_cache.yaml#0":                             kindText,
	"test_mistral/test_mistral_history_uses_prompt_cache.yaml#1":                             kindText,
	"test_mistral/test_mistral_model_thinking_part.yaml#1":                                   kindText,
	"test_mistral/test_mistral_model_thinking_part_iter.yaml#0":                              kindStream,
	"test_mistral/test_text_document_as_binary_content_input.yaml#0":                         kindText,
	"test_mistral/test_text_document_url_input.yaml#1":                                       kindText,
	"test_openai/test_audio_as_binary_content_input.yaml#0":                                  kindText,
	"test_openai/test_compatible_api_with_tool_calls_without_id.yaml#0":                      kindTools,
	"test_openai/test_compatible_api_with_tool_calls_without_id.yaml#1":                      kindText,
	"test_openai/test_document_as_binary_content_input.yaml#0":                               kindText,
	"test_openai/test_document_as_binary_content_input_with_tool.yaml#0":                     kindTools,
	"test_openai/test_document_as_binary_content_input_with_tool.yaml#1":                     kindText,
	"test_openai/test_document_url_input.yaml#1":                                             kindText,
	"test_openai/test_extra_headers.yaml#0":                                                  kindText,
	"test_openai/test_image_as_binary_content_input.yaml#0":                                  kindText,
	"test_openai/test_image_url_input_force_download.yaml#1":                                 kindText,
	"test_openai/test_image_url_tool_response.yaml#0":                                        kindTools,
	"test_openai/test_image_url_tool_response.yaml#1":                                        kindText,
	"test_openai/test_invalid_response.yaml#0":                                               "unparseable",
	"test_openai/test_max_completion_tokens[gpt-4.5-preview].yaml#0":                         kindText,
	"test_openai/test_max_completion_tokens[gpt-4o-mini].yaml#0":                             kindText,
	"test_openai/test_max_completion_tokens[o3-mini].yaml#0":                                 kindText,
	"test_openai/test_message_history_can_start_with_model_response.yaml#0":                  kindText,
	"test_openai/test_multiple_agent_tool_calls.yaml#2":                                      kindTools,
	"test_openai/test_multiple_agent_tool_calls.yaml#3":                                      kindText,
	"test_openai/test_openai_audio_url_input.yaml#1":                                         kindText,
	"test_openai/test_openai_instructions.yaml#0":                                            kindText,
	"test_openai/test_openai_instructions_with_tool_calls_keep_instructions.yaml#0":          kindTools,
	"test_openai/test_openai_instructions_with_tool_calls_keep_instructions.yaml#1":          kindText,
	"test_openai/test_openai_model_cerebras_provider.yaml#0":                                 kindText,
	"test_openai/test_openai_model_cerebras_provider_harmony.yaml#0":                         kindText,
	"test_openai/test_openai_model_cerebras_provider_qwen_3_coder.yaml#0":                    kindText,
	"test_openai/test_openai_model_cerebras_provider_qwen_3_coder.yaml#1":                    kindTools,
	"test_openai/test_openai_model_settings_temperature_ignored_on_gpt_5.yaml#0":             kindText,
	"test_openai/test_openai_model_thinking_part.yaml#1":                                     kindText,
	"test_openai/test_openai_model_without_system_prompt.yaml#0":                             kindText,
	"test_openai/test_openai_moderation.yaml#0":                                              kindText,
	"test_openai/test_openai_moderation_block_policy.yaml#0":                                 kindText,
	"test_openai/test_openai_moderation_flagged.yaml#0":                                      kindText,
	"test_openai/test_openai_moderation_stream.yaml#0":                                       kindStream,
	"test_openai/test_openai_native_output.yaml#0":                                           kindTools,
	"test_openai/test_openai_native_output.yaml#1":                                           kindText,
	"test_openai/test_openai_native_output_multiple.yaml#0":                                  kindTools,
	"test_openai/test_openai_native_output_multiple.yaml#1":                                  kindText,
	"test_openai/test_openai_o1_mini_system_role[developer].yaml#0":                          "bad_request",
	"test_openai/test_openai_o1_mini_system_role[system].yaml#0":                             "bad_request",
	"test_openai/test_openai_prompted_output.yaml#0":                                         kindTools,
	"test_openai/test_openai_prompted_output.yaml#1":                                         kindText,
	"test_openai/test_openai_prompted_output_multiple.yaml#0":                                kindTools,
	"test_openai/test_openai_prompted_output_multiple.yaml#1":                                kindText,
	"test_openai/test_openai_text_output_function.yaml#0":                                    kindTools,
	"test_openai/test_openai_text_output_function.yaml#1":                                    kindText,
	"test_openai/test_openai_tool_output.yaml#0":                                             kindTools,
	"test_openai/test_openai_tool_output.yaml#1":                                             kindTools,
	"test_openai/test_openai_web_search_tool.yaml#0":                                         kindText,
	"test_openai/test_openai_web_search_tool_model_not_supported.yaml#0":                     "bad_request",
	"test_openai/test_openai_web_search_tool_with_user_location.yaml#0":                      kindText,
	"test_openai/test_reasoning_model_with_temperature.yaml#0":                               kindText,
	"test_openai/test_run_stream_sync_streams_real_model.yaml#0":                             kindStream,
	"test_openai/test_run_stream_sync_streams_real_model.yaml#1":                             kindStream,
	"test_openai/test_system_prompt_role_o1_mini.yaml#0":                                     kindText,
	"test_openai/test_text_document_as_binary_content_input.yaml#0":                          kindText,
	"test_openai/test_text_document_url_input.yaml#1":                                        kindText,
	"test_openai/test_text_response.yaml#0":                                                  "unparseable",
	"test_openai/test_user_id.yaml#0":                                                        kindText,
	"test_openai/test_valid_response.yaml#0":                                                 kindText,
	"test_openai/test_x_yaml_document_as_binary_content_input.yaml#0":                        kindText,
	"test_openai/test_yaml_document_as_binary_content_input.yaml#0":                          kindText,
	"test_openai/test_yaml_document_url_input.yaml#1":                                        kindText,
}

// projectMadeKinds states the kind of each project-made body (see
// llmtest.ProjectMade).
var projectMadeKinds = map[string]string{
	"project-made/openai_429_retry_after":         string(llm.ClassRateLimit),
	"project-made/openrouter_429_no_retry_after":  string(llm.ClassRateLimit),
	"project-made/openai_400_context_length":      string(llm.ClassContextLength),
	"project-made/openrouter_200_in_stream_error": string(llm.ClassInStream),
	"project-made/openai_refusal":                 string(llm.ClassRefusal),
	"project-made/openai_length":                  string(llm.ClassLengthCut),
	"project-made/openrouter_usage_cost":          kindText,
	"project-made/proxy_502_html":                 string(llm.ClassServer),
}

// recorded loads the recorded exchanges, or skips without the shared data.
func recorded(t *testing.T) []llmtest.Exchange {
	t.Helper()
	dir := shareddata.Path(t, "llm-responses")
	ex, err := llmtest.LoadCassettes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) == 0 {
		t.Fatalf("no chat-completions exchanges under %s", dir)
	}
	return ex
}

// watched remembers the last answer and error its model gave, so a test
// can tell which class a use's failure came from.
type watched struct {
	llm.Completer
	mu    sync.Mutex
	calls int
	resp  llm.Response
	err   error
}

func (w *watched) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	r, err := w.Completer.Complete(ctx, req)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	w.resp, w.err = r, err
	return r, err
}

// class is the failure class of the last call: the call's own, or that of
// its answer when the provider completed one we cannot use, or
// answerNotOurs for an answer whose text is not in our format.
func (w *watched) class() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		if c := llm.ClassOf(w.err); c != "" {
			return string(c)
		}
		return "error: " + w.err.Error()
	}
	if c := llm.ClassOf(w.resp.Check()); c != "" {
		return string(c)
	}
	return answerNotOurs
}

// replayClient is a real client for model on srv, with fast retries: a
// Retry-After beyond a millisecond ends the retries at once, so a rate
// limit is reported, not waited out.
func replayClient(t *testing.T, srv *llmtest.Server, model string, meter *llm.Meter) *watched {
	t.Helper()
	spec := llm.ModelSpec{ID: model, Name: model, Provider: "replay", Model: model, BaseURL: srv.BaseURL,
		Timeout: arena.Duration(5 * time.Second), InputUSDPerMtok: 2_500_000, OutputUSDPerMtok: 10_000_000}
	c, err := llm.NewClient(spec, "sk-test", llm.WithLogger(slog.New(slog.DiscardHandler)),
		llm.WithRetryPolicy(llm.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxRetryAfter: time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	return &watched{Completer: llm.NewChain(c, llm.ChainConfig{Meter: meter})}
}

// contractSteps bounds the forecaster's conversation in the suite.
const contractSteps = 3

// outcome runs one use against whatever srv answers for model and
// describes the result: the parsed answer ("decision:HOLD", "forecast",
// "vote:YES") or the failure class. It fails the test on a result that
// is neither, or a parsed answer beside a failure.
func outcome(t *testing.T, use string, srv *llmtest.Server, model string, task RoundTask, meter *llm.Meter) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := replayClient(t, srv, model, meter)
	switch use {
	case useDecider:
		d, err := NewTrader("a", w).Decide(ctx, testSnapshot())
		switch {
		case err != nil:
			return w.class()
		case d.SystemDefault:
			if d.Action.Kind != "HOLD" {
				t.Errorf("%s: system default %s", use, d.Action)
			}
			return w.class()
		}
		return "decision:" + string(d.Action.Kind)
	case useForecaster:
		f := &Forecaster{AgentID: "f", LLM: w, MaxSteps: contractSteps}
		tr, err := f.Forecast(ctx, task)
		switch {
		case err != nil:
			return w.class()
		case tr.Submitted():
			if tr.Failure != "" || len(tr.Predictions) != len(task.Markets) {
				t.Errorf("%s: submitted %v with failure %q", use, tr.Predictions, tr.Failure)
			}
			return "forecast"
		}
		if tr.Failure == "" {
			t.Errorf("%s: nothing submitted and no failure", use)
		}
		last := tr.Steps[len(tr.Steps)-1]
		if len(last.ToolCalls) > 0 {
			for _, c := range last.ToolCalls {
				if !c.Error || !strings.Contains(c.Result, "unknown tool") || !strings.Contains(c.Result, strings.Join(tr.Tools, ", ")) {
					return "tool result: " + c.Result
				}
			}
			// The conversation went on, within its budget of steps.
			if w.calls != contractSteps {
				t.Errorf("%s: %d calls on unknown tools, want the budget of %d", use, w.calls, contractSteps)
			}
			return "unknown_tool"
		}
		return w.class()
	case useOracle:
		r := &oracle.Resolver{ID: "o", Completer: w}
		v := r.Resolve(ctx, oracle.Question{ID: "q", Text: "Did the Fed cut rates in March 2026?"}, arena.EvidencePacket{}, 1, nil)
		if v.Failure != "" {
			if v.Decision != "" {
				t.Errorf("%s: vote %s beside failure %q", use, v.Decision, v.Failure)
			}
			return w.class()
		}
		return "vote:" + string(v.Decision)
	}
	t.Fatalf("unknown use %q", use)
	return ""
}

// TestProviderContract replays every recorded and project-made response
// to each use and checks the outcome the tables state.
func TestProviderContract(t *testing.T) {
	exchanges := append(recorded(t), llmtest.ProjectMade()...)
	task, _ := roundData(t)
	srv := llmtest.New(t)
	seen := map[string]bool{}
	for n, ex := range exchanges {
		kind, ok := recordedKinds[ex.Name]
		if ex.ProjectMade {
			kind, ok = projectMadeKinds[ex.Name]
		}
		if !ok {
			t.Errorf("%s: no expected outcome stated", ex.Name)
			continue
		}
		seen[ex.Name] = true
		model := fmt.Sprintf("replay-%d", n)
		srv.Handle(model, func(llmtest.ChatRequest) llmtest.Reply { return ex.Reply() })
		want := expectByKind(kind)
		for _, use := range uses {
			if got := outcome(t, use, srv, model, task, nil); got != want[use] {
				t.Errorf("%s, %s: outcome %q, want %q", ex.Name, use, got, want[use])
			}
		}
	}
	for name := range maps.Keys(recordedKinds) {
		if !seen[name] {
			t.Errorf("%s: stated but not recorded", name)
		}
	}
	for name := range maps.Keys(projectMadeKinds) {
		if !seen[name] {
			t.Errorf("%s: stated but not project-made", name)
		}
	}
}

// Valid answers of each use, put where a recorded answer's content goes.
const (
	ourAction   = `{"action":"HOLD","reasoning":"the prices look fair"}`
	ourVote     = `{"decision":"YES","confidence":0.9,"reasoning":"the statement says so"}`
	ourForecast = `{"predictions":[7250,1000,5000],"reasoning":["a","b","c"]}`
)

// withContent returns the envelope with our text as the answer: tool calls
// are dropped (these uses offer no tools) and everything else — provider
// extras, reasoning, refusal: null, usage details — is kept.
func withContent(env map[string]any, text string) string {
	msg := message(env)
	msg["content"] = text
	if _, ok := msg["tool_calls"]; ok {
		delete(msg, "tool_calls")
		env["choices"].([]any)[0].(map[string]any)["finish_reason"] = "stop"
	}
	b, _ := json.Marshal(env)
	return string(b)
}

// withCalls returns the envelope with its tool calls (content null, one or
// several in parallel, ids or none) renamed to ours: every call asks for a
// market's details, and the last submits the forecast when submit is set.
func withCalls(env map[string]any, submit bool) string {
	for i, c := range message(env)["tool_calls"].([]any) {
		fn := c.(map[string]any)["function"].(map[string]any)
		fn["name"], fn["arguments"] = ToolDetails, fmt.Sprintf(`{"index":%d}`, i%3)
		if submit && i == len(message(env)["tool_calls"].([]any))-1 {
			fn["name"], fn["arguments"] = ToolSubmit, ourForecast
		}
	}
	b, _ := json.Marshal(env)
	return string(b)
}

func message(env map[string]any) map[string]any {
	return env["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
}

// envelope decodes a fresh copy of the exchange's completion.
func envelope(t *testing.T, ex llmtest.Exchange) map[string]any {
	t.Helper()
	env, ok := ex.Completion()
	if !ok {
		t.Fatalf("%s: not a JSON completion", ex.Name)
	}
	return env
}

// usageOf reads the token counts and billed cost the envelope reports.
func usageOf(env map[string]any) (prompt, completion, cached, reasoning int64, cost float64, billed bool) {
	u, _ := env["usage"].(map[string]any)
	num := func(m map[string]any, k string) int64 { f, _ := m[k].(float64); return int64(f) }
	pd, _ := u["prompt_tokens_details"].(map[string]any)
	cd, _ := u["completion_tokens_details"].(map[string]any)
	cost, billed = u["cost"].(float64)
	return num(u, "prompt_tokens"), num(u, "completion_tokens"), num(pd, "cached_tokens"), num(cd, "reasoning_tokens"), cost, billed
}

// TestRealEnvelopesOurContent keeps every recorded answer's envelope and
// puts a valid answer where its content goes: each use must parse it, and
// the meter must count what the envelope's usage reports.
func TestRealEnvelopesOurContent(t *testing.T) {
	exchanges := append(recorded(t), llmtest.ProjectMade()...)
	task, _ := roundData(t)
	srv := llmtest.New(t)
	n := 0
	for i, ex := range exchanges {
		kind := recordedKinds[ex.Name]
		if ex.ProjectMade {
			kind = projectMadeKinds[ex.Name]
		}
		if kind != kindText && kind != kindTools {
			continue
		}
		n++
		prompt, completion, cached, reasoning, cost, billed := usageOf(envelope(t, ex))
		for _, use := range uses {
			model := fmt.Sprintf("env-%d-%s", i, use)
			var want string
			calls := int64(1)
			switch use {
			case useDecider:
				srv.Script(model, llmtest.Reply{Header: ex.Header, Body: withContent(envelope(t, ex), ourAction)})
				want = "decision:HOLD"
			case useOracle:
				srv.Script(model, llmtest.Reply{Header: ex.Header, Body: withContent(envelope(t, ex), ourVote)})
				want = "vote:YES"
			case useForecaster:
				want = "forecast"
				if kind == kindText {
					srv.Script(model, llmtest.Reply{Header: ex.Header, Body: withContent(envelope(t, ex), ourForecast)})
					break
				}
				// Two steps: the calls ask for details, their results go back
				// under the calls' ids, then the same envelope submits.
				srv.Script(model, llmtest.Reply{Header: ex.Header, Body: withCalls(envelope(t, ex), false)},
					llmtest.Reply{Header: ex.Header, Body: withCalls(envelope(t, ex), true)})
				calls = 2
			}
			meter := llm.NewMeter(0)
			if got := outcome(t, use, srv, model, task, meter); got != want {
				t.Errorf("%s, %s: outcome %q, want %q", ex.Name, use, got, want)
				continue
			}
			u := meter.Run()
			if u.Calls != calls || u.InputTokens != calls*prompt || u.OutputTokens != calls*completion ||
				u.PromptCachedTokens != calls*cached || u.ReasoningTokens != calls*reasoning {
				t.Errorf("%s, %s: metered %+v, want %d calls of %d+%d tokens (%d cached, %d reasoning)", ex.Name, use, u, calls, prompt, completion, cached, reasoning)
			}
			if wantBilled := int64(math.Round(cost * 1e6)); billed && (u.BilledCalls != calls || u.BilledMicros != calls*wantBilled) || !billed && u.BilledCalls != 0 {
				t.Errorf("%s, %s: billed %d µ$ over %d calls, want %d µ$ (reported: %v)", ex.Name, use, u.BilledMicros, u.BilledCalls, calls*wantBilled, billed)
			}
			if use == useForecaster && calls == 2 {
				checkToolTurn(t, ex.Name, srv.Requests(model))
			}
		}
	}
	if n == 0 {
		t.Fatal("no completed answers among the exchanges")
	}
}

// checkToolTurn checks the second request of a tool conversation: one tool
// result per call of the first answer, each naming its call by an id the
// request's assistant turn holds (the client assigns ids to calls sent
// without one).
func checkToolTurn(t *testing.T, name string, reqs []llmtest.Request) {
	t.Helper()
	if len(reqs) != 2 {
		t.Errorf("%s: %d requests, want 2", name, len(reqs))
		return
	}
	var ids []string
	var results []string
	for _, m := range reqs[1].Body.Messages {
		switch m.Role {
		case "assistant":
			var calls []struct{ ID string }
			if err := json.Unmarshal(m.ToolCalls, &calls); err != nil {
				t.Errorf("%s: assistant turn: %v", name, err)
			}
			for _, c := range calls {
				ids = append(ids, c.ID)
			}
		case "tool":
			results = append(results, m.ToolCallID)
		}
	}
	if len(ids) == 0 || !slices.Equal(ids, results) || slices.Contains(ids, "") {
		t.Errorf("%s: calls %q answered by tool results %q", name, ids, results)
	}
}

// TestProviderContractRateLimit: a 429 with Retry-After longer than the
// policy allows ends the call at once with the wait reported; one without
// is retried under the policy before it is reported.
func TestProviderContractRateLimit(t *testing.T) {
	srv := llmtest.New(t)
	byName := map[string]llmtest.Exchange{}
	for _, ex := range llmtest.ProjectMade() {
		byName[ex.Name] = ex
	}
	for _, c := range []struct {
		name     string
		wait     time.Duration
		attempts int
	}{
		{"project-made/openai_429_retry_after", 20 * time.Second, 1},
		{"project-made/openrouter_429_no_retry_after", 0, 2},
	} {
		ex := byName[c.name]
		srv.Handle(c.name, func(llmtest.ChatRequest) llmtest.Reply { return ex.Reply() })
		w := replayClient(t, srv, c.name, nil)
		_, err := w.Complete(context.Background(), llm.Request{User: "hi"})
		var le *llm.Error
		if !errors.As(err, &le) || le.Class != llm.ClassRateLimit || le.RetryAfter != c.wait || le.Attempts != c.attempts {
			t.Errorf("%s: %#v, want rate_limited after %d attempts with Retry-After %v", c.name, err, c.attempts, c.wait)
		}
		if n := len(srv.Requests(c.name)); n != c.attempts {
			t.Errorf("%s: %d requests, want %d", c.name, n, c.attempts)
		}
	}
}
