-- genvm-module-llm's default greybox script (installed as config/genvm-llm-default.lua).
--
-- Entry points the module calls, one Lua state per run (ctx is that run's table):
--   ExecPrompt(ctx, {prompt, response_format, images}, remaining_gen)
--   ExecPromptTemplate(ctx, {template, <the template's fields>}, remaining_gen)
-- each answering {data = text | table | bool, consumed_gen = integer}.
--
-- Host functions: __dflt (every module: log, user_error, json, hashes, ...) and __llm:
--   __llm.exec_prompt_in_provider(ctx, {provider, model, prompt, format, timeout})
--       → {data, tokens = {input, output, total}}; a failure raises a user error whose cause is
--         the attempt's (PROVIDER_STATUS, CONNECT, TIMEOUT, CLOSED, INVALID_JSON, ...) and whose
--         ctx says {detail, transient}
--   __llm.providers   {backend = {models = {model = {supports_json, supports_image, gen_per_token}},
--                     meta = {priority, kind}}}; meta.kind "mock" is the built-in mock backend
--                     (answers from the `mock` table the call passes, no request made)
--
-- A run's host_data may name its node's backend (llm_provider, llm_model: genvm-node serve's
-- validators) and carry Studio's mock_response {response, eq_principle_prompt_comparative,
-- eq_principle_prompt_non_comparative}, each {substring: answer}.
--   __llm.templates   {eq_comparative = {system, user}, eq_non_comparative_leader, ..._validator}
--   __llm.config      {retries, retry_backoff_ms, max_prompt_bytes, temperature, seed, max_tokens,
--                     template_max_tokens, gen_per_token}
--   __llm.exhaust()   the run's budget is spent: the module answers consumed_gen = 2^256-1

local dflt = __dflt
local llm = __llm
local config = llm.config

local function log(level, message, fields)
	fields = fields or {}
	fields.level = level
	fields.message = message
	dflt.log(fields)
end

-- Backends by meta.priority (higher first), then name (descending); models by name.
local function is_mock(name)
	local p = llm.providers[name]
	return p ~= nil and (p.meta or {}).kind == "mock"
end

local function candidates()
	local names = {}
	for name in pairs(llm.providers) do
		if not is_mock(name) then
			names[#names + 1] = name
		end
	end
	table.sort(names, function(a, b)
		local pa = (llm.providers[a].meta or {}).priority or 0
		local pb = (llm.providers[b].meta or {}).priority or 0
		if pa ~= pb then
			return pa > pb
		end
		return a > b
	end)
	local out = {}
	for _, name in ipairs(names) do
		local models = {}
		for model in pairs(llm.providers[name].models) do
			models[#models + 1] = model
		end
		table.sort(models)
		for _, model in ipairs(models) do
			out[#out + 1] = { provider = name, model = model, flags = llm.providers[name].models[model] }
		end
	end
	return out
end
local CANDIDATES = candidates()

local function refuse(cause, detail)
	dflt.user_error({ causes = { cause }, fatal = false, ctx = { detail = detail } })
end

local function check_size(text, what)
	if #text > config.max_prompt_bytes then
		refuse("PROMPT_TOO_LARGE", what .. " is " .. #text .. " bytes, the limit is " .. config.max_prompt_bytes)
	end
end

-- remaining_gen bounds the call: with a price per token, max_tokens is what the fuel pays for;
-- with gas_data.genPerTimeUnit, the provider timeout is what it pays for (x 1.5, as GenVM's
-- default script), at most 60 s. A budget that pays for nothing ends the run (exhaust).
local function apply_budget(ctx, prompt, flags, remaining_gen)
	local per_token = flags.gen_per_token or config.gen_per_token
	if per_token > 0 then
		local affordable = remaining_gen // per_token
		if affordable < 1 then
			log("warning", "remaining fuel pays for no token", { remaining_gen = remaining_gen, gen_per_token = per_token })
			llm.exhaust()
		end
		if affordable < prompt.max_tokens then
			prompt.max_tokens = affordable
		end
	end
	local per_unit = tonumber(ctx.gas_data and ctx.gas_data.genPerTimeUnit or "")
	if per_unit and per_unit > 0 then
		local seconds = remaining_gen / per_unit * 1.5
		if seconds < 1 then
			log("warning", "remaining fuel pays for less than a second", { remaining_gen = remaining_gen })
			llm.exhaust()
		end
		if seconds <= 60 then
			return seconds
		end
	end
	return nil
end

-- The candidates of this run: host_data.llm_provider names a configured backend → only it (and
-- only host_data.llm_model of it when that model is enabled there); a name not configured → every
-- candidate (the node's choice falls back to the module's, logged).
local function run_candidates(ctx)
	local hd = ctx.host_data or {}
	local want = hd.llm_provider
	if type(want) ~= "string" or want == "" then
		return CANDIDATES
	end
	local mine, exact = {}, {}
	for _, c in ipairs(CANDIDATES) do
		if c.provider == want then
			mine[#mine + 1] = c
			if c.model == hd.llm_model then
				exact[#exact + 1] = c
			end
		end
	end
	if #exact > 0 then
		return exact
	end
	if #mine > 0 then
		return mine
	end
	log("debug", "the node's LLM provider is not configured here: every backend may answer", { llm_provider = want })
	return CANDIDATES
end

local MOCK_SECTION = {
	EqComparative = "eq_principle_prompt_comparative",
	EqNonComparativeValidator = "eq_principle_prompt_non_comparative",
}

-- Studio's mocks: with a mock table for this kind of prompt (or a node on the mock backend), the
-- built-in mock answers first; no match falls through to the models, except on the mock
-- backend, where it is the contract's error NO_MOCK_MATCH.
local function try_mock(ctx, prompt, format, template)
	local hd = ctx.host_data or {}
	local section = MOCK_SECTION[template] or "response"
	local mocks = type(hd.mock_response) == "table" and hd.mock_response[section] or nil
	if type(mocks) ~= "table" then
		mocks = nil
	end
	local on_mock = type(hd.llm_provider) == "string" and is_mock(hd.llm_provider)
	if mocks == nil and not on_mock then
		return nil
	end
	local backend = on_mock and hd.llm_provider or "mock"
	if not is_mock(backend) then
		return nil -- a configured backend named "mock" replaced the built-in one
	end
	local ok, res = pcall(llm.exec_prompt_in_provider, ctx, {
		provider = backend,
		model = "mock",
		prompt = prompt,
		format = format,
		mock = mocks or {},
	})
	if ok then
		log("debug", "answered from the mocks", { section = section })
		return { data = res.data, consumed_gen = 0 }
	end
	local err = dflt.as_user_error(res)
	if err == nil then
		error(res, 0)
	end
	if on_mock then
		dflt.user_error({ causes = err.causes, fatal = false, ctx = err.ctx })
	end
	log("debug", "no mock matched: the models answer", { section = section })
	return nil
end

-- Every candidate that takes the prompt, in order; transient failures retried on the same model
-- with doubling backoff; the first answer wins. None: the fatal NO_PROVIDER_FOR_PROMPT naming
-- every attempt.
local function dispatch(ctx, prompt, format, remaining_gen, template)
	local mocked = try_mock(ctx, prompt, format, template)
	if mocked ~= nil then
		return mocked
	end
	local needs_json = format ~= "text"
	local has_images = #prompt.images > 0
	local trace = {}
	for _, c in ipairs(run_candidates(ctx)) do
		if (not needs_json or c.flags.supports_json) and (not has_images or c.flags.supports_image) then
			local attempt_prompt = {}
			for k, v in pairs(prompt) do
				attempt_prompt[k] = v
			end
			local timeout = apply_budget(ctx, attempt_prompt, c.flags, remaining_gen)
			local attempt = 0
			while true do
				attempt = attempt + 1
				local ok, res = pcall(llm.exec_prompt_in_provider, ctx, {
					provider = c.provider,
					model = c.model,
					prompt = attempt_prompt,
					format = format,
					timeout = timeout,
				})
				if ok then
					local per_token = c.flags.gen_per_token or config.gen_per_token
					return { data = res.data, consumed_gen = (res.tokens.total or 0) * per_token }
				end
				local err = dflt.as_user_error(res)
				if err == nil then
					error(res, 0) -- not a provider failure: a fault, not a reason to fall back
				end
				local cause = err.causes[1] or "UNKNOWN"
				local detail = (err.ctx and err.ctx.detail) or ""
				log("warning", "provider attempt failed", {
					provider = c.provider,
					model = c.model,
					attempt = attempt,
					cause = cause,
					detail = detail,
				})
				trace[#trace + 1] = c.provider .. "/" .. c.model .. ": " .. cause .. " " .. string.sub(detail, 1, 300)
				if not (err.ctx and err.ctx.transient) or attempt > config.retries then
					break
				end
				dflt.sleep_seconds(config.retry_backoff_ms * (1 << (attempt - 1)) / 1000)
			end
		end
	end
	local message = #trace == 0 and "no enabled model takes this prompt (JSON and image support considered)"
		or table.concat(trace, "; ")
	dflt.user_error({ causes = { "NO_PROVIDER_FOR_PROMPT" }, fatal = true, ctx = { message = message } })
end

function ExecPrompt(ctx, args, remaining_gen)
	check_size(args.prompt, "the prompt")
	local text = dflt.filter_text(args.prompt, { "RmZeroWidth", "NormalizeWS" })
	if text == "" then
		refuse("EMPTY_PROMPT", "the prompt is empty once zero-width characters and spaces are removed")
	end
	local prompt = {
		user_message = text,
		images = args.images or {},
		temperature = config.temperature,
		max_tokens = config.max_tokens,
		seed = config.seed,
	}
	if args.response_format == "json" then
		prompt.system_message = "respond with a valid json object"
	end
	return dispatch(ctx, prompt, args.response_format or "text", remaining_gen)
end

local TEMPLATES = {
	EqComparative = { id = "eq_comparative", format = "bool" },
	EqNonComparativeValidator = { id = "eq_non_comparative_validator", format = "bool" },
	EqNonComparativeLeader = { id = "eq_non_comparative_leader", format = "text" },
}

-- Every #{name} whose name is a field becomes the field's value, in one pass (a value is never
-- scanned again); an unknown #{...} stays as written.
local function fill(text, fields)
	return (string.gsub(text, "#{([^}]*)}", function(name)
		local v = fields[name]
		if type(v) == "string" then
			return v
		end
		return nil
	end))
end

function ExecPromptTemplate(ctx, args, remaining_gen)
	local t = TEMPLATES[args.template]
	if t == nil then
		refuse("UNKNOWN_TEMPLATE", tostring(args.template))
	end
	local fields = {}
	local total = 0
	for k, v in pairs(args) do
		if k ~= "template" then
			fields[k] = v
			total = total + #v
		end
	end
	if total > config.max_prompt_bytes then
		refuse("PROMPT_TOO_LARGE", "the fields are " .. total .. " bytes, the limit is " .. config.max_prompt_bytes)
	end
	-- Byte-identical answers satisfy any principle the other one does: equivalent without asking.
	if args.template == "EqComparative" and args.leader_answer == args.validator_answer then
		log("debug", "identical answers: equivalent without a model call")
		return { data = true, consumed_gen = 0 }
	end
	local template = llm.templates[t.id]
	local user = fill(template.user, fields)
	check_size(user, "the filled template")
	local prompt = {
		system_message = template.system,
		user_message = user,
		images = {},
		temperature = config.temperature,
		max_tokens = config.template_max_tokens,
		seed = config.seed,
	}
	return dispatch(ctx, prompt, t.format, remaining_gen, args.template)
end
