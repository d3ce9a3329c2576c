package llmtest

// ProjectMade returns response bodies written by this project for the
// failure classes and usage fields that the recorded exchanges lack. Each
// follows the shape a provider documents for it (named in Source); none
// was captured from a provider.
func ProjectMade() []Exchange {
	json := map[string]string{"Content-Type": "application/json"}
	with := func(k, v string) map[string]string {
		return map[string]string{"Content-Type": "application/json", k: v}
	}
	out := []Exchange{
		{
			Name: "project-made/openai_429_retry_after", Status: 429, Header: with("Retry-After", "20"),
			Source: "OpenAI API reference, error codes: 429 rate_limit_exceeded with a Retry-After header",
			Body:   `{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-x on tokens per min (TPM): Limit 200000, Used 199875, Requested 1054. Please try again in 20s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
		},
		{
			Name: "project-made/openrouter_429_no_retry_after", Status: 429, Header: json,
			Source: "OpenRouter docs, API error handling: {error:{code,message,metadata}}, code 429 without a Retry-After header",
			Body:   `{"error":{"code":429,"message":"Provider returned error","metadata":{"raw":"meta-llama/llama-3.3-70b-instruct:free is temporarily rate-limited upstream. Please retry shortly.","provider_name":"Venice"}},"user_id":"user_x"}`,
		},
		{
			Name: "project-made/openai_400_context_length", Status: 400, Header: json,
			Source: "OpenAI API reference, error codes: 400 context_length_exceeded",
			Body:   `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		},
		{
			Name: "project-made/openrouter_200_in_stream_error", Status: 200, Header: json,
			Source: "OpenRouter docs, error handling: an error after generation started arrives with HTTP 200, an error object and finish_reason \"error\"",
			Body:   `{"id":"gen-1764300000-x","object":"chat.completion","created":1764300000,"model":"openai/gpt-4o-mini","provider":"OpenAI","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"error","native_finish_reason":"error"}]}`,
		},
		{
			Name: "project-made/openai_refusal", Status: 200, Header: json,
			Source: "OpenAI API reference, chat completion object: message.refusal with content null",
			Body:   `{"id":"chatcmpl-x","object":"chat.completion","created":1764300000,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I'm sorry, I can't help with that request.","annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":812,"completion_tokens":11,"total_tokens":823,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_x"}`,
		},
		{
			Name: "project-made/openai_length", Status: 200, Header: json,
			Source: "OpenAI API reference, chat completion object: finish_reason length when max_tokens ends the answer",
			Body:   `{"id":"chatcmpl-y","object":"chat.completion","created":1764300000,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"{\"action\":\"HOLD\",\"reasoning\":\"The Fed market is fairly priced and","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":1200,"completion_tokens":16,"total_tokens":1216,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
		},
		{
			Name: "project-made/openrouter_usage_cost", Status: 200, Header: json,
			Source: "OpenRouter docs, usage accounting: usage.cost (credits, in USD) with prompt_tokens_details.cached_tokens and completion_tokens_details.reasoning_tokens; message.reasoning",
			Body:   `{"id":"gen-1764300001-y","provider":"Google","model":"google/gemini-2.5-flash","object":"chat.completion","created":1764300001,"choices":[{"logprobs":null,"finish_reason":"stop","native_finish_reason":"STOP","index":0,"message":{"role":"assistant","content":"Paris.","refusal":null,"reasoning":"The user asks for the capital of France.","reasoning_details":[{"type":"reasoning.text","text":"The user asks for the capital of France.","format":"unknown","index":0}]}}],"usage":{"prompt_tokens":1450,"completion_tokens":230,"total_tokens":1680,"cost":0.0006125,"is_byok":false,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0.0000375,"upstream_inference_completions_cost":0.000575},"completion_tokens_details":{"reasoning_tokens":180,"image_tokens":0}}}`,
		},
		{
			Name: "project-made/proxy_502_html", Status: 502, Header: map[string]string{"Content-Type": "text/html"},
			Source: "a reverse proxy's HTML error page in front of an OpenAI-compatible server (nginx's default 502 page)",
			Body:   "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
		},
	}
	for i := range out {
		out[i].ProjectMade = true
	}
	return out
}
