-- genvm-module-web's default greybox script (installed as config/genvm-web-default.lua).
--
-- Entry points the module calls, one Lua state per run (ctx is that run's table):
--   Request(ctx, {method, url, headers, body, sign, size_limit}) → {status, headers, body}
--   Render(ctx, {url, mode, wait_after_loaded, wait_after_loaded_ms, size_limit})
--       → {text = s} | {image = png} | {response = {status, headers, body}}
-- (wait_after_loaded_ms is already clamped to max_wait_after_loaded; wait_after_loaded is the
-- contract's text.)
--
-- Host functions: __dflt (every module) and __web:
--   __web.check_url(url)        the URL policy (scheme, port, TLD, allow list): raises the
--                               refusal (MALFORMED_URL, SCHEMA_FORBIDDEN, PORT_FORBIDDEN,
--                               TLD_FORBIDDEN), else answers whether the host is allow-listed
--   __web.request(ctx, req)     the sandboxed HTTP client: every hop's URL and every address
--                               checked, redirects followed by hand, the body cut at size_limit
--   __web.render(ctx, payload)  the module's headless Chromium, every page request checked
--   __web.config                {always_allow_hosts, extra_tld, max_wait_after_loaded_ms}
-- Their failures are user errors; both entry points hand them to the contract as such.
--
-- Studio's web mocks: a run's host_data.mock_web_response = {nondet_web_request = {url =
-- {method, status, body}}} answers a Request for exactly that URL and method with that status and
-- body (no headers), and a text or html Render of that URL with a GET mock's body; any other
-- request goes out as usual.

local dflt = __dflt
local web = __web

-- Failures reach the contract as its errors, never as the run's internal error (GenVM's
-- Request re-raises them non-fatal the same way).
local function as_contract_error(err)
	local u = dflt.as_user_error(err)
	if u == nil then
		error(err, 0)
	end
	u.fatal = false
	dflt.user_error(u)
end

local function mock_for(ctx, url, method)
	local hd = ctx.host_data or {}
	local m = type(hd.mock_web_response) == "table" and hd.mock_web_response.nondet_web_request or nil
	local r = type(m) == "table" and m[url] or nil
	if type(r) ~= "table" or (r.method or "GET") ~= method then
		return nil
	end
	return r
end

function Request(ctx, payload)
	web.check_url(payload.url)
	local mock = mock_for(ctx, payload.url, payload.method)
	if mock ~= nil then
		dflt.log({ level = "debug", message = "answered from the web mocks", url = payload.url })
		return { status = mock.status or 200, headers = {}, body = mock.body or "" }
	end
	local ok, res = pcall(web.request, ctx, payload)
	if not ok then
		as_contract_error(res)
	end
	return res
end

function Render(ctx, payload)
	web.check_url(payload.url)
	if payload.mode ~= "screenshot" then
		local mock = mock_for(ctx, payload.url, "GET")
		if mock ~= nil then
			dflt.log({ level = "debug", message = "rendered from the web mocks", url = payload.url })
			return { text = mock.body or "" }
		end
	end
	local ok, res = pcall(web.render, ctx, payload)
	if not ok then
		as_contract_error(res)
	end
	return res
end
